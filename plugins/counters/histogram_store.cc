// The histogram store type: per key, per time bucket, the sum of the <value>s (whole numbers, 1 when absent) of
// the records whose <time> falls in the bucket: a count of events. Buckets are `bucket` wide (map option, a
// duration, default 1m), aligned to the Unix epoch. A lookup at T returns the count of the bucket holding T.
// Merges add: the host merges each batch into a shard once (loading a file again is a new batch and counts again).
//
// On-disk format (version 1; bump kVersion if it changes): bucket_store.h, with the aggregate = the count as 8
// bytes, big-endian two's complement.
#include <cstdint>

#include "bucket_store.h"
#include "buckets.h"
#include "planb/encoding.h"
#include "planb/plugin.h"

namespace planb::counters {
namespace {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kCountField = 2;  // Count's position in kFields

Code FromRecord(const Record& record, uint8_t* out, ErrorBuffer* error) {
  int64_t count = 1;
  if (record.has_value) {
    Escaped shown;
    if (record.value_type != ValueType::kString) {
      return Fail(error, Code::kInvalidArgument, "<value> of a histogram record must be a whole number, not XML");
    }
    bool out_of_range = false;
    if (!ParseWholeNumber(TrimValue(record.value), &count, &out_of_range)) {
      return Fail(error, Code::kInvalidArgument,
                  out_of_range ? "<value> '%s' is out of range (a signed 64-bit whole number)"
                               : "<value> '%s' is not a whole number (e.g. 1, 42, -3)",
                  Escape(record.value, &shown));
    }
  }
  PutU64(out, static_cast<uint64_t>(count));
  return Code::kOk;
}

bool Add(uint8_t* into, const uint8_t* more) {
  int64_t sum;
  if (__builtin_add_overflow(static_cast<int64_t>(GetU64(into)), static_cast<int64_t>(GetU64(more)), &sum)) {
    return false;
  }
  PutU64(into, static_cast<uint64_t>(sum));
  return true;
}

bool Valid(const uint8_t*) { return true; }  // every 64-bit pattern is a count

void Fill(const uint8_t* bytes, Row* row) {
  if (row->own_field_count > kCountField) row->own_fields[kCountField].number = static_cast<int64_t>(GetU64(bytes));
}

const Aggregate kCount = {"histogram", 8, &FromRecord, &Add, &Valid, &Fill};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept { return CreateBucketStore(args, error, kCount); }

void Destroy(Store* store) noexcept { DestroyBucketStore(store); }

const FieldSpec kFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"BucketStart", FieldKind::kDate, RowField::kEffectiveTime},
    {"Count", FieldKind::kNumber, RowField::kOwn, kFieldShownByLookup | kFieldZeroWhenAbsent},
};
static_assert(sizeof(kFields) / sizeof(kFields[0]) == kCountField + 1, "Count is the last field");

const PluginDescriptor kDescriptor =
    BucketStoreDescriptor("histogram", kVersion, "Histogram: key + time bucket -> count of events (sum of whole-number values); merges add", kFields,
                          sizeof(kFields) / sizeof(kFields[0]), &Create, &Destroy);

}  // namespace
}  // namespace planb::counters

PLANB_PLUGIN(planb::counters::kDescriptor)
