// The metric store type: per key, per time bucket, count / sum / min / max of the <value>s (decimal numbers) of
// the records whose <time> falls in the bucket; Mean is sum / count. Buckets as the histogram's (map option
// `bucket`, default 1m, aligned to the Unix epoch). Merges add counts and sums and take the min of mins and the
// max of maxes; the host merges each batch into a shard once (loading a file again is a new batch and counts
// again).
//
// Sums are exact and order-free: a value is parsed to a double (as before), refused beyond +-1e20, and rounded to
// a whole number of units of 1e-9 (roundl of the long double product v * 1e9); sums add those units as signed
// 128-bit integers, so shards that merged the same batches in any order hold byte-identical rows (an integer sum
// is associative, fmin / fmax are too, and -0 is stored as +0 so that they never pick between two zeros). A sum
// is exact to 1e-9 of the parsed values; it leaves its range only past 2^127 units (~1.7e29), more than 1.7e9
// values of 1e20 each. Sum is shown as the double nearest its exact decimal value, Mean as units / 1e9 / count
// in long double (x87 on x86-64, deterministic) rounded to double.
//
// On-disk format (version 2; bump kVersion if it changes; version 1 held the sum as a double, and its shards are
// refused by the host's layout check): bucket_store.h, with the aggregate (40 bytes) = count (8 bytes, big-endian
// two's complement, > 0), sum in units of 1e-9 (16 bytes, big-endian two's complement), then min and max (8 bytes
// each: the IEEE-754 bits, big-endian; finite, min <= max).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bucket_store.h"
#include "buckets.h"
#include "planb/encoding.h"
#include "planb/plugin.h"

namespace planb::counters {
namespace {

constexpr uint32_t kVersion = 2;
constexpr uint32_t kAggregateSize = 40;
constexpr double kRange = 1e20;  // |value| at most; exact as a double
constexpr long double kUnitsPerOne = 1e9L;
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

void PutI128(uint8_t* out, __int128 v) {
  const unsigned __int128 bits = static_cast<unsigned __int128>(v);
  PutU64(out, static_cast<uint64_t>(bits >> 64));
  PutU64(out + 8, static_cast<uint64_t>(bits));
}

__int128 GetI128(const uint8_t* in) {
  const unsigned __int128 bits = (static_cast<unsigned __int128>(GetU64(in)) << 64) | GetU64(in + 8);
  return static_cast<__int128>(bits);
}

struct Stats {
  int64_t count = 0;
  __int128 units = 0;  // the sum in units of 1e-9
  double min = 0;
  double max = 0;
};

void Encode(const Stats& s, uint8_t* out) {
  PutU64(out, static_cast<uint64_t>(s.count));
  PutI128(out + 8, s.units);
  PutDouble(out + 24, s.min);
  PutDouble(out + 32, s.max);
}

Stats DecodeStats(const uint8_t* in) {
  return Stats{static_cast<int64_t>(GetU64(in)), GetI128(in + 8), GetDouble(in + 24), GetDouble(in + 32)};
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
  if (std::fabs(v) > kRange) {
    return Fail(error, Code::kInvalidArgument, "<value> '%s' is beyond the metric's range of +-1e20",
                Escape(record.value, &shown));
  }
  if (v == 0) v = 0;  // -0 as +0: fmin / fmax of two zeros would depend on their order
  const auto units = static_cast<__int128>(std::roundl(static_cast<long double>(v) * kUnitsPerOne));
  Encode(Stats{1, units, v, v}, out);
  return Code::kOk;
}

bool Add(uint8_t* into, const uint8_t* more) {
  Stats a = DecodeStats(into);
  const Stats b = DecodeStats(more);
  int64_t count;
  __int128 units;
  if (__builtin_add_overflow(a.count, b.count, &count) || __builtin_add_overflow(a.units, b.units, &units)) {
    return false;
  }
  Encode(Stats{count, units, std::fmin(a.min, b.min), std::fmax(a.max, b.max)}, into);
  return true;
}

bool Valid(const uint8_t* bytes) {
  const Stats s = DecodeStats(bytes);
  return s.count > 0 && std::isfinite(s.min) && std::isfinite(s.max) && s.min <= s.max;  // any sum is valid
}

// The double nearest the sum's exact decimal value: units / 1e9 written out in a stack buffer and read back with
// from_chars (correctly rounded), so 0.1 + 0.2 is 0.3. Allocates nothing (lookups call it).
double SumAsDouble(__int128 units) {
  char text[64];
  char* const end = text + sizeof text;
  char* p = end;
  unsigned __int128 magnitude =
      units < 0 ? 0 - static_cast<unsigned __int128>(units) : static_cast<unsigned __int128>(units);
  for (int i = 0; i < 9; ++i) {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  }
  *--p = '.';
  do {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  if (units < 0) *--p = '-';
  double d = 0;
  std::from_chars(p, end, d);
  return d;
}

void Fill(const uint8_t* bytes, Row* row) {
  if (row->own_field_count <= kMeanField) return;
  const Stats s = DecodeStats(bytes);
  row->own_fields[kCountField].number = s.count;
  const long double sum = static_cast<long double>(s.units) / kUnitsPerOne;
  row->own_fields[kSumField].real = SumAsDouble(s.units);
  row->own_fields[kMinField].real = s.min;
  row->own_fields[kMaxField].real = s.max;
  row->own_fields[kMeanField].real = static_cast<double>(sum / static_cast<long double>(s.count));
}

static_assert(kAggregateSize <= kMaxAggregateSize, "bucket_store.h: the largest aggregate");
const Aggregate kStats = {"metric", kAggregateSize, &FromRecord, &Add, &Valid, &Fill};

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
