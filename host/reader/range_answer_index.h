// The Reader's read index of a ranged map (key_format number, ipv4 or ip): every answer of the map, range of
// numbers or addresses by range, in flat arrays (segment_table.h) that a lookup searches instead of calling
// the store type's Get, which walks LMDB's B+trees twice (the greatest range start, then the winner's row).
//
// Which maps: those whose store type promises that its answer for an address depends only on the ranges that
// contain it (PluginDescriptor::answers_by_containing_ranges, SDK 7.9) and that have no lookup time: Ranged
// State. The index
// is built from one read transaction by ReadRangeMapAnswers (range_map_answers.h): one Get per range boundary
// through the store type itself, so it answers exactly what Get answers, for every address. It copies the
// values, so answering needs no transaction.
//
// Never consulted for another version of the map (answer_index.h). Immutable once built; shared by every thread
// of the Reader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/plugin_host/map_plugins.h"
#include "host/reader/answer_index.h"
#include "host/reader/segment_table.h"
#include "host/storage/map_env.h"
#include "planb/bytes.h"
#include "planb/status.h"
#include "planb/value_type.h"

namespace planb {

class RangeAnswerIndex final : public AnswerIndex {
 public:
  // Whether maps of `plugins` can have one (the store type's promise, number keys of any key_format, no time).
  static bool Eligible(const MapPlugins& plugins);

  // The index of `env` as it is now. kNotSupported: not Eligible. kFull: it would take more than `max_bytes`
  // (the map's read_index_max_size), named with the figures. Other errors are the map's (a row that does not
  // decode, LMDB), naming it.
  static Status Build(std::shared_ptr<MapEnv> env, uint64_t max_bytes, std::shared_ptr<const RangeAnswerIndex>* out);

  // AnswerIndex: kMiss when no range holds the address or number; kNotRead for a key that is not an address in
  // a form the index reads, and for text keys of a number map or numbers of an address map.
  Answer Find(std::string_view key, Bytes* value, ValueType* type) const override;
  Answer FindNumber(int64_t key, Bytes* value, ValueType* type) const override {
    if (!number_map_) return Answer::kNotRead;
    return AnswerOf(numbers_.Find(static_cast<uint64_t>(key) ^ (uint64_t{1} << 63)), value, type);
  }

  uint64_t segments() const { return v4_.size() + v6_.size() + numbers_.size(); }

 private:
  struct StoredAnswer {
    uint32_t offset;  // into arena_
    uint32_t size;
    ValueType type;
  };

  Answer AnswerOf(uint32_t answer, Bytes* value, ValueType* type) const {
    if (answer == SegmentTable<uint32_t>::kNoAnswer) return Answer::kMiss;
    const StoredAnswer& a = answers_[answer];
    *value = Bytes(reinterpret_cast<const uint8_t*>(arena_.data()) + a.offset, a.size);
    *type = a.type;
    return Answer::kFound;
  }

  RangeAnswerIndex() : AnswerIndex(ReadIndexKind::kRange) {}

  bool ipv4_map_ = false;
  bool number_map_ = false;
  SegmentTable<uint64_t> numbers_;            // a number map's (ordered: n ^ 2^63)
  SegmentTable<uint32_t> v4_;                 // IPv4 addresses (an ip map's ::ffff:0:0/96)
  SegmentTable<unsigned __int128> v6_;        // an ip map's other addresses
  std::vector<StoredAnswer> answers_;         // distinct values
  std::string arena_;                         // their bytes
};

}  // namespace planb
