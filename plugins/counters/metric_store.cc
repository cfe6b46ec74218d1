// The metric store type: per key, per time bucket, count / sum / min / max of the <value>s (decimal numbers) of
// the records whose <time> falls in the bucket; Mean is sum / count. Buckets as the histogram's (map option
// `bucket`, default 1m, aligned to the Unix epoch). Merges add counts and sums and take the min of mins and the
// max of maxes; the host merges each batch into a shard once (loading a file again is a new batch and counts
// again). Sums are IEEE doubles added in merge order, so shards that merged the same batches in another order
// may differ in the last bits of a sum.
//
// On-disk format (version 1; bump kVersion if it changes): bucket_store.h, with the aggregate = count (8 bytes,
// big-endian two's complement, > 0), then sum, min and max (8 bytes each: the IEEE-754 bits, big-endian; finite,
// min <= max).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bucket_store.h"
#include "buckets.h"
#include "planb/encoding.h"
#include "planb/plugin.h"

namespace planb::counters {
namespace {

constexpr uint32_t kVersion = 1;
// Positions in kFields.
constexpr uint32_t kCountField = 2;
constexpr uint32_t kSumField = 3;
constexpr uint32_t kMinField = 4;
constexpr uint32_t kMaxField = 5;
constexpr uint32_t kMeanField = 6;

void PutDouble(uint8_t* out, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  PutU64(out, bits);
}

double GetDouble(const uint8_t* in) {
  const uint64_t bits = GetU64(in);
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

struct Stats {
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
};

void Encode(const Stats& s, uint8_t* out) {
  PutU64(out, static_cast<uint64_t>(s.count));
  PutDouble(out + 8, s.sum);
  PutDouble(out + 16, s.min);
  PutDouble(out + 24, s.max);
}

Stats DecodeStats(const uint8_t* in) {
  return Stats{static_cast<int64_t>(GetU64(in)), GetDouble(in + 8), GetDouble(in + 16), GetDouble(in + 24)};
}

Code FromRecord(const Record& record, uint8_t* out, ErrorBuffer* error) {
  if (!record.has_value) return Fail(error, Code::kInvalidArgument, "<reference> has no <value> (a number)");
  Escaped shown;
  if (record.value_type != ValueType::kString) {
    return Fail(error, Code::kInvalidArgument, "<value> of a metric record must be a number, not XML");
  }
  double v = 0;
  if (!ParseDecimal(TrimValue(record.value), &v)) {
    return Fail(error, Code::kInvalidArgument, "<value> '%s' is not a finite decimal number (e.g. 12, -0.5, 1.5e3)",
                Escape(record.value, &shown));
  }
  Encode(Stats{1, v, v, v}, out);
  return Code::kOk;
}

bool Add(uint8_t* into, const uint8_t* more) {
  Stats a = DecodeStats(into);
  const Stats b = DecodeStats(more);
  int64_t count;
  const double sum = a.sum + b.sum;
  if (__builtin_add_overflow(a.count, b.count, &count) || !std::isfinite(sum)) return false;
  Encode(Stats{count, sum, std::fmin(a.min, b.min), std::fmax(a.max, b.max)}, into);
  return true;
}

bool Valid(const uint8_t* bytes) {
  const Stats s = DecodeStats(bytes);
  return s.count > 0 && std::isfinite(s.sum) && std::isfinite(s.min) && std::isfinite(s.max) && s.min <= s.max;
}

void Fill(const uint8_t* bytes, Row* row) {
  if (row->own_field_count <= kMeanField) return;
  const Stats s = DecodeStats(bytes);
  row->own_fields[kCountField].number = s.count;
  row->own_fields[kSumField].real = s.sum;
  row->own_fields[kMinField].real = s.min;
  row->own_fields[kMaxField].real = s.max;
  row->own_fields[kMeanField].real = s.sum / static_cast<double>(s.count);
}

const Aggregate kStats = {"metric", 32, &FromRecord, &Add, &Valid, &Fill};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept { return CreateBucketStore(args, error, kStats); }

void Destroy(Store* store) noexcept { DestroyBucketStore(store); }

const FieldSpec kFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"BucketStart", FieldKind::kDate, RowField::kEffectiveTime},
    {"Count", FieldKind::kNumber, RowField::kOwn, kFieldShownByLookup},
    {"Sum", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
    {"Min", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
    {"Max", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
    {"Mean", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
};
static_assert(sizeof(kFields) / sizeof(kFields[0]) == kMeanField + 1, "Mean is the last field");

const PluginDescriptor kDescriptor =
    BucketStoreDescriptor("metric", kVersion, "Metric: key + time bucket -> count, sum, min, max, mean of decimal values; merges add", kFields,
                          sizeof(kFields) / sizeof(kFields[0]), &Create, &Destroy);

}  // namespace
}  // namespace planb::counters

PLANB_PLUGIN(planb::counters::kDescriptor)
