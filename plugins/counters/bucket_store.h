// The store type both histogram and metric are: per key, per time bucket, one row holding an aggregate of the
// <value>s of the records whose <time> falls in the bucket; a batch adds into a shard. An Aggregate says what the
// aggregate is (histogram_store.cc: a count; metric_store.cc: count, sum, min, max) and how it adds.
//
// On-disk format (the type's version; bump it in the descriptor if anything here changes):
//   LMDB key   = scheme prefix + bucket start (8 bytes, PutOrderedI64: big-endian, sign bit flipped)
//   LMDB value = scheme stored key + bucket width in ms (8 bytes, big-endian, > 0) + aggregate (Aggregate::size)
// A key's rows are contiguous and in start order. Each row carries its own width so that rows of different widths
// can coexist (condensation may later roll old buckets into wider ones; the map's `bucket` may change): the
// intervals [start, start + width) of one key never overlap, so the row holding an instant is the last row
// starting at or before it, and a lookup is one seek plus at most one step back.
//
// Adding a row (a record into a batch, a batch row into a shard) at (key, start, width): into the key's row
// holding `start` when that row also holds the whole new interval (the same bucket, or a wider one already
// rolled up); a new row when no row of the key overlaps the interval; otherwise kInvalidArgument (a wider
// bucket over narrower rows cannot be split). Sums that leave their range are refused, never wrapped.
#pragma once

#include <cstdint>

#include "planb/plugin.h"

namespace planb::counters {

inline constexpr uint32_t kStartSize = 8;
inline constexpr uint32_t kWidthSize = 8;
inline constexpr uint32_t kMaxAggregateSize = 40;

// One type's aggregate, as the bytes a row stores (on-disk format). Functions, not virtuals: a static table.
struct Aggregate {
  const char* type_name;  // names rows in messages: "histogram"
  uint32_t size;          // bytes, <= kMaxAggregateSize
  // The aggregate of one record (its <value>) into `out`; kInvalidArgument saying what is wrong.
  Code (*from_record)(const Record& record, uint8_t* out, ErrorBuffer* error);
  // Adds `more` into `into`; false (and `into` unchanged) when a sum would leave its range.
  bool (*add)(uint8_t* into, const uint8_t* more);
  // Whether `bytes` are an aggregate from_record / add could have written.
  bool (*valid)(const uint8_t* bytes);
  // Fills the type's own fields of `row` (own_fields is non-null) from valid `bytes`.
  void (*fill)(const uint8_t* bytes, Row* row);
};

// A PluginDescriptor::create_store for a bucket store of `aggregate` (static): the map's scheme and its `bucket`
// option. Null with `error` filled when either is wrong.
Store* CreateBucketStore(const PluginArgs* args, ErrorBuffer* error, const Aggregate& aggregate);
void DestroyBucketStore(Store* store);

// What both types' descriptors share: a text key through the map's scheme, lookups at an instant, the bucket
// start as the key suffix, retention, and the one option `bucket`; the caller names the type and its fields.
PluginDescriptor BucketStoreDescriptor(const char* name, uint32_t version, const char* summary,
                                       const FieldSpec* fields, uint32_t field_count,
                                       Store* (*create)(const PluginArgs*, ErrorBuffer*), void (*destroy)(Store*));

}  // namespace planb::counters
