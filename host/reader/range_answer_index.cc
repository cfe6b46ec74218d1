#include "host/reader/range_answer_index.h"

#include <lmdb.h>

#include <unordered_map>
#include <utility>

#include "host/plugin_host/key_format.h"
#include "host/query/range_map_answers.h"
#include "host/reader/ipv6_text.h"
#include "host/storage/map_reader.h"
#include "planb/ip_address.h"

namespace planb {
namespace {

// Four decimals 0..255 joined by dots, none with a leading zero: exactly the IPv4 text inet_pton (and so the
// store type, planb/ip_address.h) reads. Anything else is left to the store type.
bool ParseDottedQuad(std::string_view s, uint32_t* out) {
  if (s.size() < 7 || s.size() > 15) return false;
  uint32_t address = 0;
  size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
    const size_t begin = i;
    uint32_t v = 0;
    while (i < s.size() && i - begin < 4 && s[i] >= '0' && s[i] <= '9') v = v * 10 + static_cast<uint32_t>(s[i++] - '0');
    const size_t digits = i - begin;
    if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && s[begin] == '0')) return false;
    address = (address << 8) | v;
  }
  if (i != s.size()) return false;
  *out = address;
  return true;
}

Address128 FromBytes(const uint8_t* b) {
  Address128 a = 0;
  for (int i = 0; i < 16; ++i) a = (a << 8) | b[i];
  return a;
}

bool IsMapped(Address128 a) { return a >= kIpv4MappedStart && a <= kIpv4MappedEnd; }

}  // namespace

bool RangeAnswerIndex::Eligible(const MapPlugins& plugins) {
  const PluginDescriptor& d = plugins.type_descriptor();
  if (!d.answers_by_containing_ranges || d.lookup_uses_time || d.lookup_key != LookupKeyKind::kNumber) return false;
  for (uint32_t i = 0; i < d.field_count; ++i) {
    if (d.fields[i].field == RowField::kOwn) return false;  // a promise broken: answers have more than a value
  }
  return true;
}

Status RangeAnswerIndex::Build(std::shared_ptr<MapEnv> env, uint64_t max_bytes,
                               std::shared_ptr<const RangeAnswerIndex>* out) {
  out->reset();
  const std::string& map = env->plugins().config().name;
  if (!Eligible(env->plugins())) {
    return Status(Code::kNotSupported, "map " + map + " (type " + env->plugins().type_descriptor().name +
                                           ") has no read index: its store type does not answer by containing ranges");
  }
  auto index = std::shared_ptr<RangeAnswerIndex>(new RangeAnswerIndex());
  const KeyFormat format = MapKeyFormat(env->plugins().config());
  index->ipv4_map_ = format == KeyFormat::kIpv4;
  index->number_map_ = format == KeyFormat::kNumber;
  MapReader reader;
  PLANB_RETURN_IF_ERROR(reader.Open(env));
  index->txn_id_ = mdb_txn_id(reader.table().txn);
  RangeMapAnswers answers;
  // The smallest entry is 8 bytes: more boundaries than that could never fit, found before any lookup.
  PLANB_RETURN_IF_ERROR(ReadRangeMapAnswers(reader, /*time_ms=*/0, {}, &answers, max_bytes / 8 + 1)
                            .WithContext("building the read index"));

  for (const AnswerValue& v : answers.values) {
    if (index->arena_.size() + v.bytes.size() > UINT32_MAX) {
      return Status(Code::kFull, "map " + map + ": its distinct values take more than 4 GiB, too much for a read index");
    }
    index->answers_.push_back(
        StoredAnswer{static_cast<uint32_t>(index->arena_.size()), static_cast<uint32_t>(v.bytes.size()), v.type});
    index->arena_ += v.bytes;
  }
  // Segments in address order, each routed by where it starts. ReadRangeMapAnswers breaks ranges at both ends of
  // ::ffff:0:0/96, so none crosses them; the IPv6 table gets a segment without an answer at the start of that
  // block, so that its segment before the block cannot run on into it.
  bool barrier = format != KeyFormat::kIp;  // only an ip map has an IPv6 table
  auto add = [&](Address128 start, uint32_t answer) {
    if (index->number_map_) {
      index->numbers_.Add(static_cast<uint64_t>(start), answer);  // ordered already (range_map_answers.h)
      return;
    }
    if (!barrier && start >= kIpv4MappedStart) {
      // Only when a segment lies below the block: with none, an address below the first start has no answer
      // anyway, and a barrier far below every other start would stretch the bucket table's span (from ::ffff:0:0
      // to 2000::/3 and beyond) so that the real starts all share one bucket: a binary search over all of them.
      if (index->v6_.size() > 0) index->v6_.Add(kIpv4MappedStart, SegmentTable<uint32_t>::kNoAnswer);
      barrier = true;
    }
    if (IsMapped(start)) {
      index->v4_.Add(static_cast<uint32_t>(start - kIpv4MappedStart), answer);
    } else if (!index->ipv4_map_) {
      index->v6_.Add(start, answer);
    }
  };
  for (size_t i = 0; i < answers.ranges.size(); ++i) {
    const AnsweredRange& r = answers.ranges[i];
    add(r.first, r.value);
    const bool next_adjacent = i + 1 < answers.ranges.size() && answers.ranges[i + 1].first == r.last + 1;
    const Address128 top = index->number_map_ ? Address128{UINT64_MAX} : ~Address128{0};
    if (r.last != top && !next_adjacent) add(r.last + 1, SegmentTable<uint32_t>::kNoAnswer);
  }
  if (!barrier) index->v6_.Add(kIpv4MappedStart, SegmentTable<uint32_t>::kNoAnswer);
  index->v4_.Finish();
  index->v6_.Finish();
  index->numbers_.Finish();
  index->answers_.shrink_to_fit();
  index->arena_.shrink_to_fit();
  index->bytes_ = index->v4_.bytes() + index->v6_.bytes() + index->numbers_.bytes() +
                  index->answers_.capacity() * sizeof(StoredAnswer) +
                  index->arena_.capacity();
  if (index->bytes_ > max_bytes) {
    return Status(Code::kFull, "map " + map + ": its read index would take " + std::to_string(index->bytes_) +
                                   " bytes, more than read_index_max_size (" + std::to_string(max_bytes) + ")");
  }
  index->env_ = std::move(env);
  *out = std::move(index);
  return Status::Ok();
}

RangeAnswerIndex::Answer RangeAnswerIndex::Find(std::string_view key, Bytes* value, ValueType* type) const {
  if (number_map_) return Answer::kNotRead;
  uint32_t v4 = 0;
  if (ParseDottedQuad(key, &v4)) return AnswerOf(v4_.Find(v4), value, type);
  if (ipv4_map_ || key.find(':') == std::string_view::npos) return Answer::kNotRead;
  Address128 a = 0;
  if (!ParsePlainIpv6(key, &a)) {
    ip::Address parsed;
    bool ipv4 = false;
    if (ip::ParseAddress(key, &parsed, &ipv4) != nullptr) return Answer::kNotRead;  // the store type says why
    a = FromBytes(parsed.bytes);
  }
  if (IsMapped(a)) return AnswerOf(v4_.Find(static_cast<uint32_t>(a - kIpv4MappedStart)), value, type);
  return AnswerOf(v6_.Find(a), value, type);
}

}  // namespace planb
