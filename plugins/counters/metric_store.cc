// The metric store type: per key, per time bucket, count / sum / min / max of the <value>s (decimal numbers) of
// the records whose <time> falls in the bucket; Mean is sum / count. Buckets as the histogram's (map option
// `bucket`, default 1m, aligned to the Unix epoch). Merges add counts and sums and take the min of mins and the
// max of maxes; the host merges each batch into a shard once (loading a file again is a new batch and counts
// again). Sums are IEEE doubles added in merge order, so shards that merged the same batches in another order
// may differ in the last bits of a sum.
//
// On-disk format (version 1; bump kVersion if it changes): bucket_store.h, with Agg = count (8 bytes, big-endian
// two's complement, > 0), then sum, min and max (8 bytes each: the IEEE-754 bits, big-endian; finite, min <= max).
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
  static constexpr uint32_t kSize = 32;
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;

  static Code FromRecord(const Record& record, Stats* out, ErrorBuffer* error) {
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
    out->count = 1;
    out->sum = out->min = out->max = v;
    return Code::kOk;
  }

  bool Add(const Stats& more) {
    int64_t count_sum;
    const double total = sum + more.sum;
    if (__builtin_add_overflow(count, more.count, &count_sum) || !std::isfinite(total)) return false;
    count = count_sum;
    sum = total;
    min = std::fmin(min, more.min);
    max = std::fmax(max, more.max);
    return true;
  }

  void Encode(uint8_t* out) const {
    PutU64(out, static_cast<uint64_t>(count));
    PutDouble(out + 8, sum);
    PutDouble(out + 16, min);
    PutDouble(out + 24, max);
  }

  static bool Decode(const uint8_t* in, Stats* out) {
    out->count = static_cast<int64_t>(GetU64(in));
    out->sum = GetDouble(in + 8);
    out->min = GetDouble(in + 16);
    out->max = GetDouble(in + 24);
    return out->count > 0 && std::isfinite(out->sum) && std::isfinite(out->min) && std::isfinite(out->max) &&
           out->min <= out->max;
  }

  void Fill(Row* row) const {
    if (row->own_field_count <= kMeanField) return;
    row->own_fields[kCountField].number = count;
    row->own_fields[kSumField].real = sum;
    row->own_fields[kMinField].real = min;
    row->own_fields[kMaxField].real = max;
    row->own_fields[kMeanField].real = sum / static_cast<double>(count);
  }
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  return CreateBucketStore<Stats>(args, error, "metric");
}

void Destroy(Store* store) noexcept { delete static_cast<BucketStore<Stats>*>(store); }

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

const OptionSpec kOptions[] = {
    {kBucketOption, kDefaultBucket, "width of a time bucket, aligned to the Unix epoch (e.g. 10s, 1m, 1h, 1d)"},
};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "metric";
  d.version = kVersion;
  d.summary = "Metric: key + time bucket -> count, sum, min, max, mean of decimal values; merges add";
  d.options = kOptions;
  d.option_count = sizeof(kOptions) / sizeof(kOptions[0]);
  d.uses_key_scheme = true;
  d.key_suffix_size = kStartSize;
  d.lookup_key = LookupKeyKind::kText;
  d.lookup_uses_time = true;
  d.maintenance = kMaintainRetain;
  d.fields = kFields;
  d.field_count = sizeof(kFields) / sizeof(kFields[0]);
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb::counters

PLANB_PLUGIN(planb::counters::kDescriptor)
