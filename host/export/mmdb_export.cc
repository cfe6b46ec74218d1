#include "host/export/mmdb_export.h"

#include <vector>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/query/range_map_answers.h"
#include "host/export/mmdb_data_encoder.h"
#include "host/export/mmdb_file.h"
#include "host/export/mmdb_search_tree.h"
#include "host/plugin_host/key_format.h"
#include "host/storage/content_version.h"

namespace planb {
namespace {

constexpr Address128 kIpv4Span = 0xFFFFFFFFu;

uint32_t TrailingZeros(Address128 a) {
  const uint64_t low = static_cast<uint64_t>(a);
  if (low != 0) return static_cast<uint32_t>(__builtin_ctzll(low));
  const uint64_t high = static_cast<uint64_t>(a >> 64);
  return high == 0 ? 128 : 64 + static_cast<uint32_t>(__builtin_ctzll(high));
}

// floor(log2(a)), a > 0.
uint32_t Log2(Address128 a) {
  const uint64_t high = static_cast<uint64_t>(a >> 64);
  if (high != 0) return 127 - static_cast<uint32_t>(__builtin_clzll(high));
  return 63 - static_cast<uint32_t>(__builtin_clzll(static_cast<uint64_t>(a)));
}

// [first, last] as the fewest aligned networks (never /0: the root is always a node).
Status InsertRange(MmdbSearchTree* tree, uint32_t bits, Address128 first, Address128 last, uint32_t data,
                   uint64_t* networks) {
  for (Address128 at = first;;) {
    const Address128 span = last - at;  // addresses after `at`
    uint32_t k = std::min(TrailingZeros(at), bits - 1);
    if (span != ~Address128{0}) k = std::min(k, Log2(span + 1));
    PLANB_RETURN_IF_ERROR(tree->Insert(at, bits - k, data));
    ++*networks;
    const Address128 end = at + ((Address128{1} << k) - 1);
    if (end >= last) return Status::Ok();
    at = end + 1;
  }
}

}  // namespace

Status ExportMmdb(const MapReader& reader, const MmdbExportSpec& spec, MmdbExportSummary* summary) {
  *summary = MmdbExportSummary();
  const MapEnv& env = reader.env();
  const std::string& map = env.plugins().config().name;
  const bool ipv4_map = MapKeyFormat(env.plugins().config()) == KeyFormat::kIpv4;
  ContentVersion version;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(reader.table().txn, env.meta(), &version).WithContext(env.path()));
  summary->content_version = version.ToString();

  RangeMapAnswers answers;
  PLANB_RETURN_IF_ERROR(ReadRangeMapAnswers(reader, spec.time_ms, spec.progress, &answers));
  summary->rows = answers.rows;
  summary->ranges = answers.ranges.size();

  // Values first, in the data section once each: a bad one is named with the first range that answers it.
  std::string data;
  std::vector<uint32_t> offsets(answers.values.size());
  for (size_t v = 0; v < answers.values.size(); ++v) {
    offsets[v] = static_cast<uint32_t>(data.size());
    const AnswerValue& value = answers.values[v];
    const Status s = value.type == ValueType::kJson ? AppendMmdbJson(value.bytes, &data)
                                                    : AppendMmdbText(value.bytes, &data);
    if (!s.ok()) {
      std::string where;
      for (const AnsweredRange& r : answers.ranges) {
        if (r.value == v) {
          where = " for " + Address128Text(r.first) + "-" + Address128Text(r.last);
          break;
        }
      }
      return Status(s.code(), "map " + map + ": the answer" + where + " cannot be written to a MaxMind DB: " +
                                  s.message());
    }
    if (data.size() > UINT32_MAX) {
      return Status::Invalid("map " + map + ": its values are more than the 4 GiB a MaxMind DB data section holds");
    }
  }

  const uint32_t bits = ipv4_map ? 32 : 128;
  bool has_ipv4 = false;
  for (const AnsweredRange& r : answers.ranges) {
    if (r.first >= kIpv4MappedStart && r.last <= kIpv4MappedStart + kIpv4Span) has_ipv4 = true;
  }
  if (!ipv4_map && has_ipv4 && !answers.ipv4_compatible_rows.empty()) {
    const auto& row = answers.ipv4_compatible_rows.front();
    return Status::Invalid("map " + map + ": its range " + Address128Text(row.first) + "-" +
                           Address128Text(row.second) +
                           " lies inside ::/96, where a MaxMind DB keeps IPv4 addresses (1.2.3.4 is looked up as "
                           "::1.2.3.4), and the map has IPv4 ranges too: delete that range to export the map");
  }
  MmdbSearchTree tree(bits);
  for (const AnsweredRange& r : answers.ranges) {
    Address128 first = r.first, last = r.last;
    if (ipv4_map) {
      first -= kIpv4MappedStart;  // an ipv4 map's rows are all inside ::ffff:0:0/96
      last -= kIpv4MappedStart;
    } else if (has_ipv4 && last <= kIpv4Span) {
      continue;  // ::/96 holds the IPv4 space below
    } else if (has_ipv4 && first >= kIpv4MappedStart && last <= kIpv4MappedStart + kIpv4Span) {
      first -= kIpv4MappedStart;
      last -= kIpv4MappedStart;
    }
    const Status s = InsertRange(&tree, bits, first, last, r.value, &summary->networks);
    if (!s.ok()) {
      return Status::Internal("map " + map + ": range " + Address128Text(r.first) + "-" + Address128Text(r.last) +
                              ": " + s.message());
    }
  }
  if (!ipv4_map && has_ipv4) {
    PLANB_RETURN_IF_ERROR(tree.Alias(kIpv4MappedStart, 0, 96).WithContext("map " + map + ": ::ffff:0:0/96"));
  }

  MmdbMetadata metadata;
  metadata.ip_version = ipv4_map ? 4 : 6;
  metadata.database_type = spec.database_type;
  metadata.build_epoch = static_cast<uint64_t>(spec.now_ms < 0 ? 0 : spec.now_ms / 1000);
  metadata.description = "Plan B map " + map + " at content version " + version.ToString() + ", answers at " +
                         FormatIsoTime(spec.time_ms);
  std::string file;
  PLANB_RETURN_IF_ERROR(AssembleMmdb(tree, data, offsets, metadata, &file).WithContext("map " + map));
  PLANB_RETURN_IF_ERROR(ReplaceUserFile(spec.out_path, file));
  summary->records = answers.values.size();
  summary->node_count = tree.node_count();
  summary->ip_version = metadata.ip_version;
  summary->bytes = file.size();
  return Status::Ok();
}

}  // namespace planb
