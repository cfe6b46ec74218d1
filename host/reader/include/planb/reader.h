// planb::Reader: lookups from inside an event processor, millions a second (the product's hot path).
//
//   planb::ReaderOptions options;
//   options.config_path = "/etc/planb/planb.ini";
//   std::unique_ptr<planb::Reader> reader;
//   planb::Status s = planb::Reader::Open(options, &reader);
//   planb::LookupResult r = reader->Lookup("city_to_country", "cardiff");
//   if (r.found()) Use(r.value.view());
//
// On a storage node (or a single node) lookups read the shards directly; elsewhere they read a local snapshot of
// each map (docs/snapshots.md), fetched from the storage nodes on first use and refreshed in the background while
// the old one keeps serving. Installed as libplanb_reader.so with this header (it needs ZeroMQ and libzip, which
// plugin headers must not pull in).
//
// Thread-safety: every method may be called from any number of threads. Each thread gets its own LMDB read
// transaction per map, reset and renewed at its next lookup of the map: a warm lookup allocates nothing and takes
// no lock (the first lookup of a map on a thread, and the first after the map's environment changed, do both).
// A thread keeps a small cache of the answers it looked up last for each map keyed by text without time (answers
// valid only while the map is unchanged: any merge makes them unused); its size is the map's lookup_cache_size.
// Ranged maps are answered from a read index of their answers (docs/performance.md), built
// when the map is opened and after merges, and never used for another version of the map: such a lookup touches
// no transaction. Its memory is bounded by the map's read_index_max_size and reported by Stats.
// View lifetime: the Bytes in a LookupResult point into the map and stay valid on the calling thread until that
// thread's next lookup of the same map on this Reader (or the Reader's destruction).
// Cost of holding views: until that next lookup the thread's transaction pins the version it read (a storage
// node's merges cannot reuse the pages it sees; a snapshot stays open). A thread that stops looking a map up keeps
// its transaction until it exits or the Reader is destroyed. Each (thread, map) takes one of the map's
// max_readers LMDB reader slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planb/bytes.h"
#include "planb/export.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

struct ReaderOptions {
  std::string config_path;               // the planb.ini ("" = ./planb.ini when it exists, else no maps)
  std::string home;                      // "" = the config's home, else planb-home beside the config
  std::vector<std::string> plugin_dirs;  // added to the config's plugin_dir entries
  // How often a background thread refreshes snapshots that are due and runs cleanup; 0 = no thread (call
  // Maintain() yourself). Storage nodes (and a single node) read their shards; there maintenance only moves
  // lookups to a shard that `planb maintain` compacted and swapped in (until then they read the old copy).
  int64_t maintenance_interval_ms = 1000;
  // Remote mode: every lookup asks the storage nodes of the config's node_list (a READ, docs/protocol.md; with
  // CURVE when the config sets keys) instead of reading a shard or a snapshot here, so nothing is fetched or
  // kept on this machine and every answer is as fresh as the node's shard. Connections (and CURVE handshakes)
  // are kept open across lookups: a lookup costs a round trip, and a LookupMany one round trip per megabyte of
  // keys and per distinct instant asked about. For lookups from machines without room for a snapshot, or that
  // must see each merge at once; local lookups are a thousand times faster (docs/performance.md). Time-aware
  // lookups asked about now use the node's clock. No maintenance thread runs.
  bool remote = false;
  // Remote mode: threads looking up at once share at most this many sets of connections (one connection per
  // node asked in each); a thread finding none free waits for one. 1 or more.
  size_t remote_connections = 4;
};

// One key's answer. A miss is code kNotFound with nothing else set; an error has another code and `error` set (a
// message in a buffer of the calling thread or of the Reader, valid like the views). Errors: kInvalidArgument for
// an unknown map or a key of the wrong kind (text for a number-keyed type or the reverse, a time for a type
// without time); kNoData, naming the map and the home, for a map with no data on this node (nothing merged into
// it yet, or the Reader was pointed at another home): never a miss; the map's environment or snapshot; the store
// type's own (kCorruption...). Remote mode: kNoData naming the node; kIOError "no storage node answered: ..."
// naming each node and why, or the node's own error; kPermissionDenied when the node refuses this client or map;
// kCorruption for an answer that does not decode.
struct LookupResult {
  Code code = Code::kNotFound;
  Bytes value;                   // state, temporal, ranged types: the value
  ValueType value_type = ValueType::kString;  // how `value` is written: text, an XML fragment, JSON
  int64_t session_start_ms = 0;  // session types: the session holding the instant asked about
  int64_t session_end_ms = 0;
  const char* error = "";
  // Found, for a type with fields of its own (RowField::kOwn, e.g. a histogram's Count): one FieldValue per field
  // of the type, indexed as MapInfo::fields (entries of standard fields are left zero; read those from the
  // members above). Null and 0 otherwise. Valid like the views.
  const FieldValue* fields = nullptr;
  uint32_t field_count = 0;

  bool found() const { return code == Code::kOk; }
};

// The instant a lookup of a time-aware type (temporal types, sessions) asks about: Now() (the clock, read once
// per Lookup or LookupMany call) or At(ms), any instant in milliseconds since the epoch (the epoch itself and
// times before it included). Types without time accept only Now().
class LookupTime {
 public:
  static constexpr LookupTime Now() { return LookupTime(false, 0); }
  static constexpr LookupTime At(int64_t ms) { return LookupTime(true, ms); }
  constexpr bool is_now() const { return !given_; }
  constexpr int64_t ms() const { return ms_; }  // REQUIRES: !is_now()

 private:
  constexpr LookupTime(bool given, int64_t ms) : given_(given), ms_(ms) {}
  bool given_;
  int64_t ms_;
};

// One key of a batched lookup (LookupMany): the text key or the number, and for time-aware types the instant.
// The key field the map's type does not use must stay empty / 0 (else that key's result is kInvalidArgument).
struct ReaderKey {
  std::string_view key;                 // text-keyed types
  int64_t number = 0;                   // ranged types
  LookupTime time = LookupTime::Now();  // temporal types and sessions; others take only Now()
};

// One field of a map's store type, as queries name it.
struct FieldInfo {
  std::string name;                    // "Key", "Count"...
  FieldKind kind = FieldKind::kText;   // how LookupResult::fields[i] holds it (own fields)
  bool own = false;                    // RowField::kOwn: its value is LookupResult::fields[i]
  uint32_t flags = 0;                  // kFieldShownByLookup, kFieldZeroWhenAbsent (planb/store.h)
};

// What a configured map is: how to build its keys and which LookupResult fields its answers fill.
struct MapInfo {
  std::string type;          // the store type's name: state, temporal, ranged, temporal_ranged, session...
  bool number_keys = false;  // looked up by a signed 64-bit number (ranged types), else by text
  bool uses_time = false;    // lookups are at an instant (LookupTime)
  bool has_value = false;    // results carry `value`
  bool has_session = false;  // results carry session_start_ms / session_end_ms
  std::vector<FieldInfo> fields;  // the type's fields in its order; LookupResult::fields has one entry per field
                                  // when any is `own`
};

// One configured map's figures (Reader::Stats), for the host program to export (as Prometheus counters and
// gauges, say). Counters count from the Reader's Open and only grow; each key of a LookupMany counts once.
struct MapStats {
  std::string map;
  uint64_t lookups = 0;  // found + misses + errors
  uint64_t found = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;   // every other answer: a key of the wrong kind or refused, no data, the environment...
  // Of found + misses, those a thread's hot-key cache answered (maps keyed by text without time; each thread
  // keeps lookup_cache_size of answers per map, docs/performance.md).
  uint64_t cache_answers = 0;
  // What lookups read now. `serving` is false before the first lookup, while the map has no data, and after an
  // idle environment was let go of (min_time_to_keep_env_open); the next lookup opens it again.
  bool serving = false;
  bool reads_snapshot = false;                 // a local snapshot (not a storage node), else the shard itself
  bool reads_remote = false;                   // remote mode: a storage node answers (content_version: its last)
  std::optional<uint64_t> content_version;     // batches merged into what lookups read (when serving)
  std::optional<int64_t> snapshot_created_ms;  // when that snapshot was installed here: its age is now minus this
  uint64_t refreshes = 0;         // times lookups moved to a newer snapshot (or a compacted shard)
  uint64_t refresh_failures = 0;  // refreshes that failed; the snapshot held kept serving
  std::string last_refresh_error; // the last failure's message ("" when none failed)
  // The read index of a ranged map with IP address keys (docs/performance.md): the bytes it takes (0: none
  // held), whether it answers for what lookups read now (false after a merge, until it is built anew), and why
  // the last build failed ("" when it did not; e.g. over the map's read_index_max_size).
  uint64_t read_index_bytes = 0;
  bool read_index_current = false;
  std::string read_index_error;
  uint64_t read_index_builds = 0;  // read indexes built (or tried: a failure is not tried again until it changes)
};

struct ReaderStats {
  std::vector<MapStats> maps;        // every configured map, in the config's order
  uint64_t unknown_map_lookups = 0;  // lookups of a map the config does not have (errors of no map)
  uint64_t remote_connections = 0;   // remote mode: connections made to storage nodes (each with its handshake)
};

class PLANB_EXPORT Reader {
 public:
  // Reads the config, loads the plugins and opens the home. Maps are opened (and snapshots fetched) on first use
  // or by Prepare. Errors: the config, the plugins, the home.
  static Status Open(const ReaderOptions& options, std::unique_ptr<Reader>* out);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Text-keyed types (state, temporal, session); time-aware types are asked about now, or `time` (a time other
  // than Now() on a type without time is kInvalidArgument). Map names match as in the config (any case).
  LookupResult Lookup(std::string_view map, std::string_view key);
  LookupResult Lookup(std::string_view map, std::string_view key, LookupTime time);
  // Number-keyed types (ranged, temporal ranged).
  LookupResult Lookup(std::string_view map, int64_t number);
  LookupResult Lookup(std::string_view map, int64_t number, LookupTime time);

  // Many keys of one map in one read transaction (one renew for the batch, no allocation; for a type with fields
  // of its own, a batch larger than any before on this thread for this map grows its buffer of their values once):
  // results[i] answers keys[i]. Returns kOk when every result is found or a miss. Otherwise the first error: an error that stops
  // the batch (the map, its snapshot, the store type failing) is set in that key's result and every later one (in
  // all of them for the map); a key of the wrong kind, or one the store refuses (a malformed address of an ip map,
  // whose message is then copied), only fails its own result. Views as for Lookup.
  Code LookupMany(std::string_view map, const ReaderKey* keys, size_t count, LookupResult* results);

  // Opens `map` now (fetching its snapshot if this node needs one), so that the first lookup is not the slow
  // one and errors show at start-up. kNoData when the map has no data on this node. (Lookups try a map
  // that could not be opened, e.g. one with no data yet, at most once a second and meanwhile answer as the last
  // try did; Prepare tries at once.)
  Status Prepare(std::string_view map);

  // Read-your-writes after a load: fetches a newer snapshot of `map` now, whatever the age of the one held, and
  // lookups on every thread use it from their next lookup of the map on. On a storage node (or a single node)
  // lookups read the shard itself and see merges at once; Refresh only moves them to a shard that maintenance
  // compacted and swapped in (docs/maintenance.md). Errors: kInvalidArgument for an unknown map; kNotFound when
  // nothing was merged into it yet; the fetch's (the snapshot held keeps serving).
  Status Refresh(std::string_view map);

  // Describes the configured `map` (kInvalidArgument naming it when the config has no such map).
  Status Describe(std::string_view map, MapInfo* out) const;

  // One maintenance pass, as the background thread runs it: refreshes the snapshots that are due, lets go of
  // environments idle longer than min_time_to_keep_env_open, deletes superseded snapshots no process holds; on a
  // storage node, reopens shards that maintenance compacted and swapped in. It also builds the read index of each
  // open map that can have one and whose index is missing or older than the map (a State map's is built only
  // here, never by a lookup or Prepare: it copies every row; docs/performance.md).
  Status Maintain();

  // The figures of every map now (MapStats). Takes each map's lock briefly and one read transaction per map
  // served; lookups on other threads go on meanwhile and never wait for it. Counts are each thread's own, summed:
  // a lookup that runs during the call may or may not be in them.
  ReaderStats Stats() const;

  // ISO-8601 times as `planb lookup --time` reads and `planb lookup` prints them (one parser for both): parses
  // "2024-01-01T08:10:22.023Z", "2024-01-01T09:10:22.5+01:00", "2024-01-01T08:10Z", "2024-01-01" (midnight UTC),
  // expanded years ("+10009-12-28T00:00:00Z")... into milliseconds since the epoch; false on anything else.
  static bool ParseTime(std::string_view text, int64_t* ms);
  // Formats as "2024-01-01T08:10:22.023Z" (always milliseconds, always Z); every int64 round-trips.
  static std::string FormatTime(int64_t ms);

  class Impl;

 private:
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace planb
