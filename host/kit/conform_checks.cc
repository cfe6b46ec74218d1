// The scan, DecodeRow and warm-lookup checks of `planb conform` (conform_checks.h).
#include "host/kit/conform_checks.h"

#include <algorithm>
#include <deque>
#include <limits>

#include "host/common/hex.h"
#include "host/common/log_text.h"
#include "host/kit/alloc_count.h"
#include "host/kit/conform_rows.h"

namespace planb {
namespace {

constexpr size_t kMaxSamples = 64;     // rows whose key / KeyStart / time become bounds
constexpr size_t kMaxProbes = 100000;  // lookups per warm pass (hits, and as many misses)
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t Plus(int64_t a, int64_t b) {  // saturating: bounds near the ends of time stay ordered
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? kMax : kMin) : r;
}

// What a full scan saw of one row: the members bounds test, and its line.
struct RowCopy {
  std::string key;
  int64_t number = 0;
  int64_t time = 0;
  std::string line;
};

Row ViewOf(const RowCopy& copy, const RowAxes& axes) {
  Row row;
  row.key = Bytes(copy.key);
  row.range_from = copy.number;
  (axes.time == RowAxes::Time::kStart ? row.session_start_ms : row.effective_time_ms) = copy.time;
  return row;
}

std::string Describe(const ScanBounds& b) {
  std::string text;
  if (b.has_key) text += "Key = " + LogValue(b.key.view());
  if (b.has_number_bounds) {
    text += std::string(text.empty() ? "" : ", ") + "KeyStart " + std::to_string(b.number_min) + ".." +
            std::to_string(b.number_max);
  }
  if (b.has_time_bounds) {
    text += std::string(text.empty() ? "" : ", ") + "time " + std::to_string(b.time_min) + ".." +
            std::to_string(b.time_max) + " ms";
  }
  return text.empty() ? "no bounds" : text;
}

ScanBounds KeyBounds(std::string_view key) {
  ScanBounds b;
  b.has_key = true;
  b.key = Bytes(key);
  return b;
}
ScanBounds NumberBounds(int64_t min, int64_t max) {
  ScanBounds b;
  b.has_number_bounds = true;
  b.number_min = min;
  b.number_max = max;
  return b;
}
ScanBounds TimeBounds(int64_t min, int64_t max) {
  ScanBounds b;
  b.has_time_bounds = true;
  b.time_min = min;
  b.time_max = max;
  return b;
}

// Bounds drawn from the rows: each on the axes the type has. `keys` holds the bytes the bounds view.
std::vector<ScanBounds> BoundsFrom(const std::vector<RowCopy>& rows, const RowAxes& axes,
                                   std::deque<std::string>* keys) {
  std::vector<ScanBounds> all{ScanBounds()};
  const size_t step = std::max<size_t>(1, rows.size() / kMaxSamples);
  int64_t time_lo = kMax, time_hi = kMin, number_lo = kMax, number_hi = kMin;
  for (const RowCopy& r : rows) {
    time_lo = std::min(time_lo, r.time);
    time_hi = std::max(time_hi, r.time);
    number_lo = std::min(number_lo, r.number);
    number_hi = std::max(number_hi, r.number);
  }
  for (size_t i = 0; i < rows.size(); i += step) {
    const RowCopy& r = rows[i];
    if (axes.key) {
      const std::string& present = keys->emplace_back(r.key);
      const std::string& absent = keys->emplace_back(r.key + "\x01");
      all.push_back(KeyBounds(present));
      all.push_back(KeyBounds(absent));
      if (axes.time != RowAxes::Time::kNone) {
        ScanBounds b = KeyBounds(present);
        b.has_time_bounds = true;
        b.time_min = b.time_max = r.time;
        all.push_back(b);
        b.time_min = Plus(r.time, 1);
        b.time_max = kMax;
        all.push_back(b);
      }
    }
    if (axes.number) {
      all.push_back(NumberBounds(r.number, r.number));
      all.push_back(NumberBounds(Plus(r.number, -1), Plus(r.number, 1)));
      all.push_back(NumberBounds(Plus(r.number, 1), r.number));  // empty: min above max
    }
    if (axes.time != RowAxes::Time::kNone) {
      all.push_back(TimeBounds(r.time, r.time));
      all.push_back(TimeBounds(kMin, r.time));
      all.push_back(TimeBounds(r.time, kMax));
      all.push_back(TimeBounds(Plus(r.time, 1), r.time));  // empty
    }
  }
  if (!rows.empty() && axes.number) {
    all.push_back(NumberBounds(kMin, Plus(number_lo, -1)));
    all.push_back(NumberBounds(Plus(number_hi, 1), kMax));
  }
  if (!rows.empty() && axes.time != RowAxes::Time::kNone) {
    all.push_back(TimeBounds(kMin, Plus(time_lo, -1)));
    all.push_back(TimeBounds(Plus(time_hi, 1), kMax));
  }
  return all;
}

}  // namespace

Status CheckScanRanges(const MapEnv& shard, CheckResult* result) {
  const PluginDescriptor& type = shard.plugins().type_descriptor();
  const RowAxes axes = RowAxes::Of(type);
  std::vector<RowCopy> rows;
  ScanStats stats;
  PLANB_RETURN_IF_ERROR(ScanMap(
      shard, ScanRequest(),
      [&](const Row& row) {
        rows.push_back({std::string(row.key.view()), row.range_from, axes.TimeOf(row), RowLine(row, type)});
        return true;
      },
      &stats));
  if (rows.empty()) {
    result->Fail("the map has no rows to draw bounds from");
    return Status::Ok();
  }
  std::deque<std::string> keys;
  for (const ScanBounds& bounds : BoundsFrom(rows, axes, &keys)) {
    std::vector<std::string> want;
    for (const RowCopy& r : rows) {
      if (axes.Matches(bounds, ViewOf(r, axes))) want.push_back(r.line);
    }
    ScanRequest request;
    request.bounds = bounds;
    request.filter = [&](const Row& row) { return axes.Matches(bounds, row); };
    std::vector<std::string> got;
    Status s = ScanLines(shard, request, &got);
    if (!s.ok()) {
      result->Fail("scan with " + Describe(bounds) + ": " + LogValue(s.message()));
      continue;
    }
    if (got == want) continue;
    std::string missing;
    for (const std::string& line : want) {
      if (std::find(got.begin(), got.end(), line) == got.end()) {
        missing = ", first missing: " + LogValue(line);
        break;
      }
    }
    result->Fail("scan with " + Describe(bounds) + " returned " + std::to_string(got.size()) +
                 " row(s); a full scan filtered the same way returns " + std::to_string(want.size()) + missing);
  }
  return Status::Ok();
}

Status CheckDecodeRows(const MapReader& reader, CheckResult* result) {
  const Table& table = reader.table();
  const GuardedStore& store = *reader.env().plugins().store();
  const PluginDescriptor& type = reader.env().plugins().type_descriptor();
  const RowAxes axes = RowAxes::Of(type);
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(table.txn, table.dbi, &cursor);
  if (rc != MDB_SUCCESS) return Status::IOError(std::string("opening a cursor: ") + mdb_strerror(rc));
  OwnFieldValues own1(type), own2(type), own3(type);
  MDB_val k;
  MDB_val v;
  uint64_t rows = 0;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    ++rows;
    const std::string where =
        "row " + std::to_string(rows) + " (LMDB key " + LogValue(HexString(Bytes(k).view())) + ")";
    ErrorBuffer error;
    Row first;
    own1.Attach(&first);
    Code code = store.DecodeRow(table, Bytes(k), Bytes(v), &first, &error);
    if (code != Code::kOk) {
      result->Fail(where + " does not decode: " + LogValue(Status::FromPlugin(code, error).message()));
      continue;
    }
    Row second;
    own2.Attach(&second);
    code = store.DecodeRow(table, Bytes(k), Bytes(v), &second, &error);
    const std::string line = RowLine(first, type);
    if (code != Code::kOk || RowLine(second, type) != line) {
      result->Fail(where + " decodes to " + LogValue(line) + ", then to " +
                   (code == Code::kOk ? LogValue(RowLine(second, type)) : std::string("an error")));
      continue;
    }
    ScanBounds bounds;
    if (axes.key) bounds = KeyBounds(first.key.view());
    if (axes.number) {
      bounds.has_number_bounds = true;
      bounds.number_min = bounds.number_max = first.range_from;
    }
    if (axes.time != RowAxes::Time::kNone) {
      bounds.has_time_bounds = true;
      bounds.time_min = bounds.time_max = axes.TimeOf(first);
    }
    KeyRange range;
    code = store.ScanRange(table, bounds, &range, &error);
    MDB_val lower = range.lower.view().mdb();
    MDB_val upper = range.upper.view().mdb();
    const bool holds = code == Code::kOk && (!range.has_lower || mdb_cmp(table.txn, table.dbi, &k, &lower) >= 0) &&
                       (!range.has_upper || mdb_cmp(table.txn, table.dbi, &k, &upper) <= 0);
    if (!holds) {
      result->Fail(where + " " + LogValue(line) + ": ScanRange for " + Describe(bounds) + " " +
                   (code == Code::kOk ? "gives a range without it" : "says no row can match"));
    }
    Row found;
    own3.Attach(&found);
    code = store.Get(table, axes.LookupOf(first), &found, &error);
    if (code != Code::kOk) {
      result->Fail(where + " " + LogValue(line) + ": a lookup of its " + (axes.key ? "key" : "KeyStart") +
                   " at its instant " +
                   (code == Code::kNotFound ? "finds nothing" : "fails: " + LogValue(error.message)));
    }
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return Status::IOError(std::string("reading rows: ") + mdb_strerror(rc));
  if (rows == 0) result->Fail("the map has no rows to decode");
  return Status::Ok();
}

Status CheckWarmLookups(const MapReader& reader, CheckResult* result) {
  if (!AllocationCountingAvailable()) {
    result->Fail("this process cannot count allocations (run the planb program)");
    return Status::Ok();
  }
  const PluginDescriptor& type = reader.env().plugins().type_descriptor();
  const RowAxes axes = RowAxes::Of(type);
  // Every probe is built before counting starts: hits are the rows' own lookups, misses the same with the key
  // changed (a byte appended), KeyStart moved below every row, and the instant before any row's.
  struct Probe {
    std::string key;
    LookupKey lookup;
    bool hit;
  };
  std::deque<Probe> probes;
  int64_t number_lo = kMax, time_lo = kMax;
  std::vector<std::string> keys;
  ScanStats stats;
  PLANB_RETURN_IF_ERROR(ScanMap(
      reader.env(), ScanRequest(),
      [&](const Row& row) {
        if (probes.size() >= kMaxProbes) return false;
        Probe& p = probes.emplace_back(Probe{std::string(row.key.view()), axes.LookupOf(row), true});
        p.lookup.key = Bytes(p.key);
        number_lo = std::min(number_lo, row.range_from);
        time_lo = std::min(time_lo, axes.TimeOf(row));
        return true;
      },
      &stats));
  const size_t hits = probes.size();
  for (size_t i = 0; i < hits; ++i) {
    Probe& miss = probes.emplace_back(Probe{probes[i].key + "\x01", probes[i].lookup, false});
    miss.lookup.key = Bytes(miss.key);
    if (axes.number) miss.lookup.number = Plus(number_lo, -1000);
    if (axes.time != RowAxes::Time::kNone && !axes.key) miss.lookup.time_ms = Plus(time_lo, -1);
  }
  Row row;
  OwnFieldValues own(type);
  ErrorBuffer error;
  for (const Probe& p : probes) {  // warm up: pages in, memos filled
    own.Attach(&row);
    static_cast<void>(reader.Lookup(p.lookup, &row, &error));
  }
  uint64_t total = 0;
  const Probe* first = nullptr;
  uint64_t first_count = 0;
  SetAllocationCounting(true);
  for (const Probe& p : probes) {
    const uint64_t before = AllocationCount();
    own.Attach(&row);
    static_cast<void>(reader.Lookup(p.lookup, &row, &error));
    const uint64_t n = AllocationCount() - before;
    if (n != 0 && first == nullptr) first = &p, first_count = n;
    total += n;
  }
  SetAllocationCounting(false);
  if (total != 0) {
    result->Fail(std::to_string(total) + " heap allocation(s) in " + std::to_string(probes.size()) +
                 " warm lookups; the first: " + std::to_string(first_count) + " in the " +
                 (first->hit ? "hit" : "miss") + " of key " + LogValue(first->key));
  }
  return Status::Ok();
}

}  // namespace planb
