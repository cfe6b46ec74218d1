// The store-type interface: one kind of state (State, Temporal State, Ranged, Session, ...). A store type owns
// its LMDB layout, how input records become rows, how a batch merges into a shard, lookups and row decoding.
//
// Thread-safety: a store instance is immutable after creation; Get and DecodeRow may run on many threads at
// once (each with its own transaction and cursor). Put and Merge run inside the single LMDB write transaction.
// Errors: a Code and a message in the host's ErrorBuffer. An exception that escapes a call is caught by the
// host and reported naming the plugin and the call (the call fails); catching your own (planb::Guard) gives
// better messages.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstdint>

#include "planb/bytes.h"
#include "planb/key_scheme.h"
#include "planb/status.h"
#include "planb/table.h"
#include "planb/value_type.h"

namespace planb {

enum class RecordKind : uint32_t { kReference = 1, kSession = 2 };

// One input element (<reference> or <session>), already checked for well-formedness by the host.
// Views are valid only during the call.
struct Record {
  uint32_t size = sizeof(Record);  // first: lets the struct grow (plugin.h)
  RecordKind kind = RecordKind::kReference;
  bool has_key = false;
  Bytes key;                  // <key> text, case-sensitive, as written
  bool has_range = false;
  Bytes range_from;           // <from> text as written
  Bytes range_to;             // <to> text as written
  bool time_given = false;    // <time> present; otherwise `time_ms` is the stream's effective time
  int64_t time_ms = 0;        // milliseconds since the epoch, UTC
  bool has_timeout = false;
  int64_t timeout_ms = 0;     // <session><timeout>
  bool has_value = false;
  ValueType value_type = ValueType::kString;
  Bytes value;
};

// What a lookup asks for; each store type reads the fields it needs.
struct LookupKey {
  uint32_t size = sizeof(LookupKey);  // first: lets the struct grow (plugin.h)
  Bytes key;            // text key types; 7.2: the address text for ranged maps with key_format ipv4 or ip
  int64_t number = 0;   // ranged types (key_format number)
  int64_t time_ms = 0;  // temporal types and sessions: the instant asked about
};

// One value of a field of the type's own (RowField::kOwn): the member its FieldKind names is the value.
// Frozen: never grows.
// Since SDK 7.1.
struct FieldValue {
  Bytes text;          // kText: a view valid like the Row's
  int64_t number = 0;  // kNumber; kDate: milliseconds since the epoch, UTC
  double real = 0;     // kDouble: a finite number
  bool flag = false;   // kBool
};

// A row as fields (lookups and queries). Views point into the map, valid until the transaction ends or resets.
struct Row {
  uint32_t size = sizeof(Row);  // first: lets the struct grow (plugin.h)
  Bytes key;
  int64_t range_from = 0;
  int64_t range_to = 0;
  int64_t effective_time_ms = 0;
  int64_t session_start_ms = 0;
  int64_t session_end_ms = 0;
  ValueType value_type = ValueType::kString;
  Bytes value;
  // 7.1: the values of the type's own fields (RowField::kOwn), indexed by the field's position in
  // PluginDescriptor::fields; the host provides own_field_count = that field count entries, reset before each
  // call. Null for types without own fields.
  FieldValue* own_fields = nullptr;
  uint32_t own_field_count = 0;
  // 7.2: ranged maps with key_format ipv4 or ip set has_addresses and give KeyStart / KeyEnd as 16-byte
  // big-endian IPv6 addresses (IPv4 as ::ffff:a.b.c.d, planb/ip_address.h); range_from / range_to then hold
  // the IPv4 number (ipv4) or 0 (ip). Write them only when `size` reaches them.
  bool has_addresses = false;
  uint8_t address_from[16] = {};
  uint8_t address_to[16] = {};
};

// The fields a store type's rows have, for queries: each names a Row member and how it is compared/printed.
// kNumber is a signed 64-bit integer, kDate milliseconds since the epoch (printed as ISO-8601 text), kDouble a
// finite double (printed in its shortest round-trip form), kBool true/false. 7.1 added kDouble and kBool.
// 7.2: kAddress is the host's, never declared by a plugin: KeyStart / KeyEnd of a map with key_format ipv4 or ip
// (Row::address_from / address_to), compared as addresses and printed as address text.
enum class FieldKind : uint32_t { kText = 1, kNumber = 2, kDate = 3, kDouble = 4, kBool = 5, kAddress = 6 };
enum class RowField : uint32_t {
  kKey = 1,            // Row::key, text
  kKeyStart = 2,       // Row::range_from, number
  kKeyEnd = 3,         // Row::range_to, number
  kEffectiveTime = 4,  // Row::effective_time_ms, date
  kStart = 5,          // Row::session_start_ms, date
  kEnd = 6,            // Row::session_end_ms, date
  kValueType = 7,      // Row::value_type, text ("string", "xml")
  kValue = 8,          // Row::value, text
  kOwn = 9,            // 7.1: Row::own_fields[the field's position], of any kind
};
// FieldSpec::flags (7.1).
// Since SDK 7.1.
inline constexpr uint32_t kFieldShownByLookup = 1;    // `planb lookup` prints it (several: name=value pairs)
inline constexpr uint32_t kFieldZeroWhenAbsent = 2;  // a lookup miss prints it as 0 (a count of nothing)
// Fields bound to a standard member narrow scans as that member does (a kEffectiveTime field by its time, say),
// whatever their name; kOwn fields only filter. Names are unique, case-insensitively.
struct FieldSpec {
  const char* name;  // as users write it in queries: "Key", "EffectiveTime"...: letters, digits, '_'
  FieldKind kind;
  RowField field;
  uint32_t flags = 0;  // 7.1: kFieldShownByLookup | kFieldZeroWhenAbsent
};

// What a query constrains on the leading parts of the LMDB key; each store type narrows what it can.
// All bounds are inclusive.
struct ScanBounds {
  uint32_t size = sizeof(ScanBounds);  // first: lets the struct grow (plugin.h)
  bool has_key = false;  // an exact text key (text-key types)
  Bytes key;
  bool has_number_bounds = false;  // KeyStart (ranged types)
  int64_t number_min = 0;
  int64_t number_max = 0;
  bool has_time_bounds = false;  // EffectiveTime (temporal types) or Start (sessions)
  int64_t time_min = 0;
  int64_t time_max = 0;
  // 7.2: KeyStart of a ranged map with key_format ipv4 or ip, as 16-byte big-endian IPv6 addresses (IPv4 as
  // ::ffff:a.b.c.d); read them only when `size` reaches them.
  bool has_address_bounds = false;
  uint8_t address_min[16] = {};
  uint8_t address_max[16] = {};
};

// The LMDB keys a scan visits: from `lower` to `upper`, both inclusive (memcmp order); no bound = open end.
struct KeyRange {
  bool has_lower = false;
  KeyPrefix lower;
  bool has_upper = false;
  KeyPrefix upper;
};

struct MergeStats {
  uint64_t rows_read = 0;
  uint64_t rows_written = 0;
};

// What maintenance asks of a shard's rows (map config `condense`, `condense_after`, `retain_for`). A row's
// "effective time" is its EffectiveTime, for a session its End. Times are ms since the epoch, UTC.
struct MaintainRequest {
  uint32_t size = sizeof(MaintainRequest);  // first: lets the struct grow (plugin.h)
  // Condense rows whose effective time is < condense_before_ms: a temporal row whose value (and value type)
  // equals the previous row's of the same key (and range) is a repeated confirmation and goes, the earliest
  // staying; sessions of a key that overlap or touch (a start at most 1 ms after an end) become one session,
  // when every one of them ends before the cut.
  bool condense = false;
  int64_t condense_before_ms = 0;
  // Delete every row whose effective time is < retain_from_ms (a row at exactly retain_from_ms stays).
  bool retain = false;
  int64_t retain_from_ms = 0;
};

struct MaintainStats {
  uint64_t rows_examined = 0;
  uint64_t rows_deleted = 0;    // by retention
  uint64_t rows_condensed = 0;  // removed or rewritten by condensation (rows that went away)
};

// PluginDescriptor::maintenance: what Store::Maintain can do for the type. The host refuses `retain_for` /
// `condense` on a map whose type lacks the flag, naming the map and the type.
inline constexpr uint32_t kMaintainRetain = 1;
inline constexpr uint32_t kMaintainCondense = 2;

class Store {
 public:
  // Adds `record` to a batch table (the writer's LMDB of one stream). kInvalidArgument names what is wrong.
  virtual Code Put(const Table& batch, const Record& record, ErrorBuffer* error) = 0;

  // Merges every row of `batch` into `shard` with this type's semantics (State: overwrite; histogram: add).
  // The host merges each batch into a shard at most once (it records the batch's id in this same transaction
  // and skips a recorded batch), so additive merges are safe. Runs inside the shard's write transaction.
  virtual Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) = 0;

  // Looks `key` up. kOk fills `row`; kNotFound is a miss (no message built). Allocates nothing.
  virtual Code Get(const Table& shard, const LookupKey& key, Row* row, ErrorBuffer* error) const = 0;

  // Decodes one row of this type's table (for queries, dumps and checks).
  virtual Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                         ErrorBuffer* error) const = 0;

  // ---- Maintenance (ABI 6). Both run inside the shard's write transaction and must leave every lookup
  // table and value table of the scheme exact (references released; the host runs the scheme's
  // SweepUnusedKeys afterwards) and any index of the type's own consistent.

  // Applies `request` to every row of `shard` (only what the type's PluginDescriptor::maintenance allows is
  // ever asked). Applying it twice changes nothing the second time. kOk with nothing done is right for a type
  // without time.
  virtual Code Maintain(const Table& shard, const MaintainRequest& request, MaintainStats* stats,
                        ErrorBuffer* error) = 0;

  // Deletes the row `shard.cursor` is on (the host's scan found it: `lmdb_key`, `value`), releasing what it
  // references. Leaves the cursor as mdb_cursor_del does, so that the host's next MDB_NEXT reaches the row
  // after the deleted one. Called once per row; FinishDeletes follows the last.
  virtual Code DeleteRow(const Table& shard, Bytes lmdb_key, Bytes value, ErrorBuffer* error) = 0;
  // After a run of DeleteRow calls in the same transaction: brings the type's own tables (an index) up to date.
  virtual Code FinishDeletes(const Table& shard, ErrorBuffer* error) = 0;

  // The narrowest LMDB key range holding every row that satisfies `bounds` (bounds it cannot use are ignored:
  // the host still filters each row). kNotFound when no row can match (e.g. an exact key that is absent).
  virtual Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                         ErrorBuffer* error) const = 0;

 protected:
  ~Store() = default;  // destroyed through the plugin's descriptor, by the module that made it
};

}  // namespace planb
