// The Session store type: an event of a key at time t with timeout d opens the session [t, t + d] (both ends
// inclusive; no timeout = the single instant t). A lookup at time T answers whether the key was in a session at
// T. Keys go through the map's key scheme.
//
// On-disk format (version 1; bump kVersion if it changes):
//   LMDB key   = scheme prefix + start (8 bytes) + end (8 bytes), both PutOrderedI64 (big-endian, sign flipped)
//   LMDB value = scheme stored key (nothing else: a session has no value)
//   table "type.stats": "max_duration_ms" -> the longest end - start of any row (8 bytes, big-endian unsigned);
//                       only ever raised (in Put and Merge), so merging a batch twice equals merging it once
// One key's rows are contiguous (the scheme's prefix is self-delimiting) and ordered by start, then end. A lookup
// walks back from the last session starting at or before T and stops at sessions starting before
// T - max_duration, which cannot reach T: a miss costs the sessions of the key in that window, not every one.
// Where several sessions contain T, the one with the latest start (then the latest end) is returned.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "planb/encoding.h"
#include "planb/keyed_rows.h"
#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kBoundsSize = 16;  // start + end
constexpr uint32_t kStatsTable = 0;   // index in PluginDescriptor::tables
constexpr char kMaxDurationKey[] = "max_duration_ms";

// The LMDB key prefix + start + end (on the caller's stack). False when the prefix leaves no room for the
// bounds, which a scheme honouring key_suffix_size never does.
bool MakeRowKey(const KeyPrefix& prefix, int64_t start_ms, int64_t end_ms, KeyPrefix* out) {
  if (prefix.size > kMaxLmdbKeySize - kBoundsSize) return false;
  std::memcpy(out->bytes, prefix.bytes, prefix.size);
  PutOrderedI64(out->bytes + prefix.size, start_ms);
  PutOrderedI64(out->bytes + prefix.size + 8, end_ms);
  out->size = prefix.size + kBoundsSize;
  return true;
}

uint64_t Duration(int64_t start_ms, int64_t end_ms) {
  return static_cast<uint64_t>(end_ms) - static_cast<uint64_t>(start_ms);  // exact even for the full int64 span
}

class SessionStore final : public Store {
 public:
  explicit SessionStore(const KeyScheme* scheme) : scheme_(scheme), form_(scheme->LookupForm()) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    if (record.kind != RecordKind::kSession) {
      return Fail(error, Code::kInvalidArgument,
                  "a <reference> element cannot be loaded into a Session map; use <session> with <map>, <key>, "
                  "<time> and an optional <timeout>");
    }
    if (!record.has_key) return Fail(error, Code::kInvalidArgument, "<session> has no <key>");
    if (record.has_range || record.has_value) {
      return Fail(error, Code::kInvalidArgument, "a <session> has no <range> or <value>");
    }
    const int64_t start = record.time_ms;
    int64_t end = start;
    if (record.has_timeout) {
      if (record.timeout_ms < 0) {
        return Fail(error, Code::kInvalidArgument, "<session> timeout of %lld ms is negative",
                    static_cast<long long>(record.timeout_ms));
      }
      if (__builtin_add_overflow(start, record.timeout_ms, &end)) {
        return Fail(error, Code::kInvalidArgument,
                    "<session> at %lld ms with a timeout of %lld ms ends after the latest representable time",
                    static_cast<long long>(start), static_cast<long long>(record.timeout_ms));
      }
    }
    uint8_t bounds[kBoundsSize];
    PutOrderedI64(bounds, start);
    PutOrderedI64(bounds + 8, end);
    KeyedRowWriter writer(batch, *scheme_, false, "Session row");
    Code code = writer.Put(record.key, Bytes(bounds, kBoundsSize), Bytes(), Bytes(), error);
    if (code != Code::kOk) return code;
    return RaiseMaxDuration(batch, Duration(start, end), error);
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    KeyedRowWriter writer(shard, *scheme_, false, "Session row", /*append=*/true);
    Code planned = writer.PlanMerge(batch, error);
    if (planned != Code::kOk) return planned;
    MDB_val k;
    MDB_val v;
    bool any = false;
    uint64_t max_duration = 0;
    for (int rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
         rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_NEXT)) {
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading batch: %s", mdb_strerror(rc));
      ++stats->rows_read;
      Bytes key;
      uint32_t prefix_size = 0;
      int64_t start = 0;
      int64_t end = 0;
      uint32_t stored_key_size = 0;
      Code code = writer.DecodeBatchRow(batch, Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, error);
      if (code == Code::kOk) code = DecodeBounds(Bytes(k), prefix_size, &start, &end, error);
      if (code != Code::kOk) return code;
      // The scheme's parts are local to each LMDB file (clash numbers, ids), so the key is placed again in the
      // shard (once per key: the writer remembers it); the bounds are copied.
      code = writer.Put(key, Bytes(static_cast<const uint8_t*>(k.mv_data) + prefix_size, kBoundsSize), Bytes(),
                        Bytes(), error);
      if (code != Code::kOk) return code;
      ++stats->rows_written;
      any = true;
      if (Duration(start, end) > max_duration) max_duration = Duration(start, end);
    }
    // Taken from the rows rather than the batch's stats, so a merge is right whatever wrote the batch.
    return any ? RaiseMaxDuration(shard, max_duration, error) : Code::kOk;
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    // The key's last row at or before (key, time, INT64_MAX) (one seek, at most one step back), then backwards.
    uint8_t target[kBoundsSize];
    PutOrderedI64(target, lookup.time_ms);
    PutOrderedI64(target + 8, INT64_MAX);
    KeySearch search;
    Code code = FindKeyedRow(shard, *scheme_, form_, lookup.key, Bytes(target, kBoundsSize), Seek::kAtOrBefore,
                             Intent::kRead, &search, error);
    if (code != Code::kOk) return code;
    const KeyPrefix& prefix = search.prefix;
    const uint32_t prefix_size = prefix.size;
    auto answer = [&](const MDB_val& k) {
      const auto* bounds = static_cast<const uint8_t*>(k.mv_data) + prefix_size;
      row->key = lookup.key;
      row->session_start_ms = GetOrderedI64(bounds);
      row->session_end_ms = GetOrderedI64(bounds + 8);
    };
    MDB_val k = search.row_key;
    MDB_val v = search.row_value;
    if (GetOrderedI64(static_cast<const uint8_t*>(k.mv_data) + prefix_size + 8) >= lookup.time_ms) {
      answer(k);  // the last session starting at or before T holds T: no need of the longest session
      return Code::kOk;
    }
    // Walking back: sessions starting before `min_start` end before the time asked about.
    uint64_t max_duration = 0;
    code = MaxDurationOfSnapshot(shard, &max_duration, error);
    if (code != Code::kOk) return code;
    const uint64_t span = static_cast<uint64_t>(lookup.time_ms) - static_cast<uint64_t>(INT64_MIN);
    const int64_t min_start =
        max_duration >= span ? INT64_MIN : static_cast<int64_t>(static_cast<uint64_t>(lookup.time_ms) - max_duration);
    int rc = MDB_SUCCESS;
    while ((rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_PREV)) == MDB_SUCCESS) {
      if (k.mv_size != prefix_size + kBoundsSize || std::memcmp(k.mv_data, prefix.bytes, prefix_size) != 0) {
        return Code::kNotFound;  // past the key's first session
      }
      const auto* bounds = static_cast<const uint8_t*>(k.mv_data) + prefix_size;
      if (GetOrderedI64(bounds) < min_start) return Code::kNotFound;
      if (GetOrderedI64(bounds + 8) >= lookup.time_ms) {
        answer(k);
        return Code::kOk;
      }
    }
    if (rc == MDB_NOTFOUND) return Code::kNotFound;
    return Fail(error, Code::kIOError, "reading Session row: %s", mdb_strerror(rc));
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    uint32_t prefix_size = 0;
    return DecodeSession(table, lmdb_key.mdb(), value.mdb(), &row->key, &prefix_size, &row->session_start_ms,
                         &row->session_end_ms, error);
  }

  // Time bounds constrain Start.
  // One cursor pass in LMDB order, a key at a time (its rows are contiguous, ordered by start then end).
  // Retention deletes as it goes; the key's sessions ending before the cut are collected, and when the key's rows
  // end, each run of them that overlaps or touches is rewritten as one row, then the cursor is sent back to the
  // first row of the next key (only the finished key's rows were written).
  Code Maintain(const Table& shard, const MaintainRequest& request, MaintainStats* stats,
                ErrorBuffer* error) noexcept override {
    return Guard(error, [&] {
      KeyGroup group;
      MDB_val k;
      MDB_val v;
      int rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_FIRST);
      while (rc == MDB_SUCCESS) {
        Bytes key;
        uint32_t prefix_size = 0;
        int64_t start = 0;
        int64_t end = 0;
        Code code = DecodeSession(shard, k, v, &key, &prefix_size, &start, &end, error);
        if (code != Code::kOk) return code;
        const Bytes prefix(static_cast<const uint8_t*>(k.mv_data), prefix_size);
        if (Bytes(group.prefix) != prefix) {
          if (!group.sessions.empty()) {
            const std::string next(static_cast<const char*>(k.mv_data), k.mv_size);
            code = CondenseGroup(shard, &group, stats, error);
            if (code != Code::kOk) return code;
            k = MDB_val{next.size(), const_cast<char*>(next.data())};
            rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_SET_KEY);  // untouched: another key's row
            if (rc != MDB_SUCCESS) {
              return Fail(error, Code::kIOError, "finding the Session row after a condensed key: %s", mdb_strerror(rc));
            }
          }
          group.prefix.assign(static_cast<const char*>(k.mv_data), prefix_size);
        }
        ++stats->rows_examined;
        if (request.retain && end < request.retain_from_ms) {
          code = DeleteKeyedRow(shard, *scheme_, Bytes(k), Bytes(v), 0, false, "Session row", error);
          if (code != Code::kOk) return code;
          ++stats->rows_deleted;
        } else if (request.condense && end < request.condense_before_ms) {
          if (group.sessions.empty()) group.stored_key.assign(static_cast<const char*>(v.mv_data), v.mv_size);
          group.sessions.push_back({start, end});
        }
        rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_NEXT);  // after a delete: the row that followed it
      }
      if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading Session rows: %s", mdb_strerror(rc));
      return CondenseGroup(shard, &group, stats, error);
    });
  }

  Code DeleteRow(const Table& shard, Bytes lmdb_key, Bytes value, ErrorBuffer* error) noexcept override {
    return DeleteKeyedRow(shard, *scheme_, lmdb_key, value, 0, false, "Session row", error);
  }

  // The longest-session stat stays an upper bound when sessions go: lookups stay right, if a little slower.
  Code FinishDeletes(const Table&, ErrorBuffer*) noexcept override { return Code::kOk; }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    range->has_lower = range->has_upper = false;
    // Prefixes are hashed or length-ordered: without an exact key neither the key nor the time narrows.
    if (!bounds.has_key) return Code::kOk;
    if (bounds.has_time_bounds && bounds.time_min > bounds.time_max) return Code::kNotFound;
    KeyPrefix prefix;
    Code code = ResolveKey(table, *scheme_, bounds.key, kBoundsSize, Intent::kRead, &prefix, error);
    if (code != Code::kOk) return code;
    if (!MakeRowKey(prefix, bounds.has_time_bounds ? bounds.time_min : INT64_MIN, INT64_MIN, &range->lower) ||
        !MakeRowKey(prefix, bounds.has_time_bounds ? bounds.time_max : INT64_MAX, INT64_MAX, &range->upper)) {
      return Code::kNotFound;
    }
    range->has_lower = range->has_upper = true;
    return Code::kOk;
  }

 private:
  // A Session row: its user key and prefix size (through the scheme) and its bounds.
  Code DecodeSession(const Table& table, const MDB_val& k, const MDB_val& v, Bytes* key, uint32_t* prefix_size,
                     int64_t* start, int64_t* end, ErrorBuffer* error) const {
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, Bytes(k), Bytes(v), key, prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    return DecodeBounds(Bytes(k), *prefix_size, start, end, error);
  }

  static Code DecodeBounds(Bytes lmdb_key, uint32_t prefix_size, int64_t* start, int64_t* end, ErrorBuffer* error) {
    if (lmdb_key.size != uint64_t{prefix_size} + kBoundsSize) {  // 64 bits: no wrap round
      return Fail(error, Code::kCorruption, "Session row key of %zu bytes is not its %u-byte prefix + %u",
                  lmdb_key.size, prefix_size, kBoundsSize);
    }
    *start = GetOrderedI64(lmdb_key.data + prefix_size);
    *end = GetOrderedI64(lmdb_key.data + prefix_size + 8);
    if (*end < *start) {
      return Fail(error, Code::kCorruption, "Session row ends (%lld) before it starts (%lld)",
                  static_cast<long long>(*end), static_cast<long long>(*start));
    }
    return Code::kOk;
  }

  struct Session {
    int64_t start;
    int64_t end;
  };
  // One key's rows during Maintain: its prefix, its stored key (every row of a key holds the same), and its
  // sessions that end before the condensation cut, in row order (by start, then end).
  struct KeyGroup {
    std::string prefix;
    std::string stored_key;
    std::vector<Session> sessions;
  };

  // Rewrites each run of `group`'s sessions that overlap or touch (a start at most 1 ms after the run's end) as
  // one row [first start, greatest end], then empties `group`. Moves `table.cursor`.
  Code CondenseGroup(const Table& table, KeyGroup* group, MaintainStats* stats, ErrorBuffer* error) {
    const std::vector<Session>& sessions = group->sessions;
    KeyPrefix prefix;
    prefix.size = static_cast<uint32_t>(group->prefix.size());
    std::memcpy(prefix.bytes, group->prefix.data(), prefix.size);
    for (size_t first = 0; first < sessions.size();) {
      Session merged = sessions[first];
      size_t last = first + 1;
      while (last < sessions.size() && (merged.end == INT64_MAX || sessions[last].start <= merged.end + 1)) {
        merged.end = std::max(merged.end, sessions[last].end);
        ++last;
      }
      if (last - first > 1) {
        Code code = WriteMerged(table, prefix, group->stored_key, &sessions[first], last - first, merged, error);
        if (code != Code::kOk) return code;
        stats->rows_condensed += last - first - 1;
      }
      first = last;
    }
    group->sessions.clear();
    return Code::kOk;
  }

  // Replaces the rows of `members` (sessions of the key under `prefix`) with the one row of `merged`.
  Code WriteMerged(const Table& table, const KeyPrefix& prefix, const std::string& stored_key, const Session* members,
                   size_t count, Session merged, ErrorBuffer* error) {
    KeyPrefix row_key;
    for (size_t i = 0; i < count; ++i) {
      if (members[i].start == merged.start && members[i].end == merged.end) continue;  // the merged row itself
      if (!MakeRowKey(prefix, members[i].start, members[i].end, &row_key)) {
        return Fail(error, Code::kCorruption, "Session prefix of %u bytes leaves no room for its bounds", prefix.size);
      }
      MDB_val k = row_key.view().mdb();
      const int rc = mdb_del(table.txn, table.dbi, &k, nullptr);
      if (rc != MDB_SUCCESS)
        return Fail(error, Code::kIOError, "deleting a condensed Session row: %s", mdb_strerror(rc));
    }
    if (!MakeRowKey(prefix, merged.start, merged.end, &row_key)) {
      return Fail(error, Code::kCorruption, "Session prefix of %u bytes leaves no room for its bounds", prefix.size);
    }
    MDB_val k = row_key.view().mdb();
    MDB_val v{stored_key.size(), const_cast<char*>(stored_key.data())};
    const int rc = mdb_put(table.txn, table.dbi, &k, &v, 0);
    if (rc != MDB_SUCCESS)
      return Fail(error, PutFailureCode(rc), "writing a condensed Session row: %s", mdb_strerror(rc));
    return RaiseMaxDuration(table, Duration(merged.start, merged.end), error);
  }

  // The recorded longest session, read once per snapshot where the host keeps a memo (its lookup readers).
  static Code MaxDurationOfSnapshot(const Table& table, uint64_t* out, ErrorBuffer* error) {
    if (table.memo != nullptr && table.memo->filled) {
      *out = table.memo->words[0];
      return Code::kOk;
    }
    Code code = ReadMaxDuration(table, out, error);
    if (code == Code::kOk && table.memo != nullptr) {
      table.memo->words[0] = *out;
      table.memo->filled = true;
    }
    return code;
  }

  // The recorded longest session; UINT64_MAX (no bound) when none is recorded.
  static Code ReadMaxDuration(const Table& table, uint64_t* out, ErrorBuffer* error) {
    if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the Session stats table is not open");
    MDB_val k{sizeof(kMaxDurationKey) - 1, const_cast<char*>(kMaxDurationKey)};
    MDB_val v;
    int rc = mdb_get(table.txn, table.store_tables[kStatsTable], &k, &v);
    if (rc == MDB_NOTFOUND) {
      *out = UINT64_MAX;
      return Code::kOk;
    }
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading Session stats: %s", mdb_strerror(rc));
    if (v.mv_size != 8) {
      return Fail(error, Code::kCorruption, "Session stats: %s has %zu bytes, not 8", kMaxDurationKey, v.mv_size);
    }
    *out = GetU64(static_cast<const uint8_t*>(v.mv_data));
    return Code::kOk;
  }

  static Code RaiseMaxDuration(const Table& table, uint64_t duration, ErrorBuffer* error) {
    if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the Session stats table is not open");
    MDB_val k{sizeof(kMaxDurationKey) - 1, const_cast<char*>(kMaxDurationKey)};
    MDB_val v;
    int rc = mdb_get(table.txn, table.store_tables[kStatsTable], &k, &v);
    if (rc == MDB_SUCCESS && v.mv_size == 8 && GetU64(static_cast<const uint8_t*>(v.mv_data)) >= duration) {
      return Code::kOk;
    }
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
      return Fail(error, Code::kIOError, "reading Session stats: %s", mdb_strerror(rc));
    }
    uint8_t bytes[8];
    PutU64(bytes, duration);
    v = MDB_val{sizeof(bytes), bytes};
    rc = mdb_put(table.txn, table.store_tables[kStatsTable], &k, &v, 0);
    if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing Session stats: %s", mdb_strerror(rc));
    return Code::kOk;
  }

  const KeyScheme* const scheme_;
  const KeyForm form_;  // the scheme's LookupForm, asked once: lookups on its forms make no scheme call
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  return CreateKeyedStore<SessionStore>(args, error, "Session");
}

void Destroy(Store* store) noexcept { delete static_cast<SessionStore*>(store); }

const FieldSpec kFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"Start", FieldKind::kDate, RowField::kStart},
    {"End", FieldKind::kDate, RowField::kEnd},
};

const char* const kTables[] = {"stats"};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "session";
  d.version = kVersion;
  d.summary = "Session: key + [start, end]; lookups tell whether a key was in a session at a time";
  d.tables = kTables;
  d.table_count = 1;
  d.uses_key_scheme = true;
  d.key_suffix_size = kBoundsSize;
  d.lookup_key = LookupKeyKind::kText;
  d.lookup_uses_time = true;
  d.maintenance = kMaintainRetain | kMaintainCondense;
  d.fields = kFields;
  d.field_count = sizeof(kFields) / sizeof(kFields[0]);
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
