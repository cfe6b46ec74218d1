#include "host/query/range_map_answers.h"

#include <arpa/inet.h>

#include <algorithm>
#include <unordered_map>

#include "host/plugin_host/key_format.h"
#include "host/query/map_scan.h"

namespace planb {
namespace {

// A number's place on the line: its ordered 64-bit form (n ^ 2^63), so positions compare as the numbers do.
Address128 NumberPosition(int64_t n) { return static_cast<uint64_t>(n) ^ (uint64_t{1} << 63); }
int64_t NumberAt(Address128 position) { return static_cast<int64_t>(static_cast<uint64_t>(position) ^ (uint64_t{1} << 63)); }

Address128 FromBytes(const uint8_t* b) {
  Address128 a = 0;
  for (int i = 0; i < 16; ++i) a = (a << 8) | b[i];
  return a;
}

}  // namespace

std::string Address128Text(Address128 a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a >= kIpv4MappedStart && a <= kIpv4MappedEnd) {
    const uint32_t v4 = htonl(static_cast<uint32_t>(a));
    inet_ntop(AF_INET, &v4, text, sizeof text);
  } else {
    uint8_t bytes[16];
    for (int i = 15; i >= 0; --i) {
      bytes[i] = static_cast<uint8_t>(a);
      a >>= 8;
    }
    inet_ntop(AF_INET6, bytes, text, sizeof text);
  }
  return text;
}

Status ReadRangeMapAnswers(const MapReader& reader, int64_t time_ms,
                        const std::function<void(uint64_t, uint64_t)>& progress, RangeMapAnswers* out,
                        uint64_t max_boundaries) {
  *out = RangeMapAnswers();
  const MapEnv& env = reader.env();
  const std::string& map = env.plugins().config().name;
  const KeyFormat format = MapKeyFormat(env.plugins().config());
  const bool number_map = format == KeyFormat::kNumber;
  const Address128 top = number_map ? Address128{UINT64_MAX} : ~Address128{0};
  std::vector<Address128> boundaries;
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(reader.table().txn, env.data()).WithContext(env.path()));
  ScanRequest request;
  ScanStats stats;
  Status row_error;
  PLANB_RETURN_IF_ERROR(ScanMapInTxn(
      env, reader.table().txn, cursor.get(), request,
      [&](const Row& row, Bytes, Bytes) {
        if (!number_map && !row.has_addresses) {
          row_error = Status::Invalid("map " + map + ": a row without IP address bounds");
          return false;
        }
        const Address128 first = number_map ? NumberPosition(row.range_from) : FromBytes(row.address_from);
        const Address128 last = number_map ? NumberPosition(row.range_to) : FromBytes(row.address_to);
        ++out->rows;
        boundaries.push_back(first);
        if (last != top) boundaries.push_back(last + 1);
        if (!number_map && last <= kIpv4CompatibleEnd) out->ipv4_compatible_rows.emplace_back(first, last);
        return true;
      },
      &stats));
  PLANB_RETURN_IF_ERROR(row_error);
  const bool ipv4_map = format == KeyFormat::kIpv4;
  const bool ip_map = format == KeyFormat::kIp;
  if (ip_map) {
    // ::/96 and ::ffff:0:0/96 are where a MaxMind DB keeps and aliases IPv4: ranges must break there.
    for (Address128 b : {Address128{0}, kIpv4CompatibleEnd + 1, kIpv4MappedStart, kIpv4MappedEnd + 1}) {
      boundaries.push_back(b);
    }
  }
  std::sort(boundaries.begin(), boundaries.end());
  boundaries.erase(std::unique(boundaries.begin(), boundaries.end()), boundaries.end());
  if (max_boundaries != 0 && boundaries.size() > max_boundaries) {
    return Status(Code::kFull, "map " + map + ": " + std::to_string(boundaries.size()) +
                                   " range boundaries, more than the " + std::to_string(max_boundaries) + " allowed");
  }

  std::unordered_map<std::string, uint32_t> value_ids;
  std::string id_key;
  LookupKey key;
  key.time_ms = time_ms;
  Row row;
  std::string text;
  for (size_t i = 0; i < boundaries.size(); ++i) {
    if (progress && i % 65536 == 0) progress(i, boundaries.size());
    if (ipv4_map && boundaries[i] > kIpv4MappedEnd) continue;  // past 255.255.255.255: nothing, and no key
    if (number_map) {
      key.number = NumberAt(boundaries[i]);
      text = std::to_string(key.number);
    } else {
      text = Address128Text(boundaries[i]);
      key.key = Bytes(text);
    }
    ErrorBuffer error;
    const Code code = reader.Lookup(key, &row, &error);
    ++out->lookups;
    if (code == Code::kNotFound) continue;
    if (code != Code::kOk) {
      return Status::FromPlugin(code, error).WithContext("map " + map + ": looking up " + text);
    }
    id_key.assign(1, static_cast<char>(row.value_type));
    id_key.append(row.value.view());
    auto [it, added] = value_ids.emplace(id_key, static_cast<uint32_t>(out->values.size()));
    if (added) out->values.push_back(AnswerValue{row.value_type, std::string(row.value.view())});
    const Address128 last = i + 1 < boundaries.size() ? boundaries[i + 1] - 1 : top;
    const bool ipv4_block_edge = ip_map && (boundaries[i] == kIpv4CompatibleEnd + 1 ||
                                            boundaries[i] == kIpv4MappedStart || boundaries[i] == kIpv4MappedEnd + 1);
    if (!out->ranges.empty() && out->ranges.back().value == it->second && out->ranges.back().last + 1 == boundaries[i] &&
        !ipv4_block_edge) {
      out->ranges.back().last = last;  // the same answer goes on
    } else {
      out->ranges.push_back(AnsweredRange{boundaries[i], last, it->second});
    }
  }
  if (progress) progress(boundaries.size(), boundaries.size());
  return Status::Ok();
}

}  // namespace planb
