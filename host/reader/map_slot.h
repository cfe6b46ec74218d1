// One configured map as a Reader serves it: the environment lookups should use now, its read index when the map
// has one (answer_index.h), and a generation number that changes whenever either does (published by maintenance or a test, dropped when idle). Lookups read the
// generation with one atomic load and compare it with the one their thread's transaction was opened at; only when
// they differ do they come here for the environment (under the mutex).
// Ownership: the slot holds one reference to the environment; each thread's context holds its own, so an
// environment closes when the last of them lets go, never under a lookup. Thread-safety: all methods.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "host/plugin_host/map_plugins.h"
#include "host/reader/answer_index.h"
#include "host/runtime.h"
#include "host/storage/map_env.h"

namespace planb {

// What a slot serves and how its refreshes went, as Reader::Stats reports them.
struct SlotFacts {
  std::shared_ptr<MapEnv> env;                 // null when none is open
  std::optional<int64_t> snapshot_created_ms;  // the snapshot env belongs to; none for a shard
  uint64_t refreshes = 0;                      // environments replaced by newer ones
  uint64_t refresh_failures = 0;
  std::string last_refresh_error;              // the last failure's message ("" when none failed)
  std::shared_ptr<const AnswerIndex> index;  // the read index held (null: none, or not eligible)
  std::string index_error;                     // why the last build of one failed ("" when it did not)
  uint64_t index_builds = 0;                   // read indexes built (or tried) since the Reader opened
};

class MapSlot {
 public:
  // A map that could not be opened (no data yet, a failed snapshot) is tried again at most this often by
  // lookups, which meanwhile answer as the last attempt did; Prepare tries at once.
  static constexpr int64_t kRetryIntervalMs = 1000;

  MapSlot(uint32_t index, std::shared_ptr<const MapPlugins> plugins);

  uint32_t index() const { return index_; }
  const std::string& name() const { return plugins_->config().name; }
  const MapPlugins& plugins() const { return *plugins_; }
  // How lookups match names: ASCII case-insensitively, as the config does. Hot path: the length first, so that
  // finding one of a few maps costs a compare or two, no hash.
  bool Matches(std::string_view name) const;

  bool number_keys() const { return number_keys_; }
  bool uses_time() const { return uses_time_; }
  // Messages for keys of the wrong kind, built once (valid for the slot's life).
  const char* text_key_error() const { return text_key_error_.c_str(); }
  const char* number_key_error() const { return number_key_error_.c_str(); }
  const char* time_error() const { return time_error_.c_str(); }

  // Whether the map can have a read index (ReadIndexKindOf) and its config allows one, and which kind. A ranged
  // map's is built when its environment is opened or replaced, before lookups move to it (about half a second
  // for 400,000 ranges); a text-keyed map's by maintenance (RefreshIndex), beside the lookups, which meanwhile go
  // to the store type: it copies every row, seconds for millions, which no first lookup should wait for.
  bool indexed() const { return index_kind_ != ReadIndexKind::kNone; }
  ReadIndexKind index_kind() const { return index_kind_; }
  // Whether lookups keep a hot-key cache per thread (HotKeyCache: text keys, no time, no fields of the type's
  // own or sessions, lookup_cache_size above 0) and its size.
  bool cached() const { return cache_bytes_ > 0; }
  size_t cache_bytes() const { return cache_bytes_; }

  // Hot path. Generations start at 1; 0 means "no environment" to a thread's context.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  void MarkUsed() {
    // Read first: once set, lookups only read the cache line instead of writing it from every thread.
    if (!used_.load(std::memory_order_relaxed)) used_.store(true, std::memory_order_relaxed);
  }

  // The environment to use and its generation, opened (and published, with its read index built) when there is
  // none. `force` ignores kRetryIntervalMs. kNotFound when nothing has been merged into the map.
  Status Acquire(Runtime& runtime, bool force, std::shared_ptr<MapEnv>* env, uint64_t* generation);
  // The same for lookups, with the read index held (null when none): an error's message goes into `error`, and
  // answering a failure again within the retry interval allocates nothing.
  Code AcquireForLookup(Runtime& runtime, std::shared_ptr<MapEnv>* env, std::shared_ptr<const AnswerIndex>* index,
                        uint64_t* generation, ErrorBuffer* error);
  // Makes `env` the one lookups use from their next lookup on; `snapshot_created_ms`: the snapshot it belongs to.
  void Publish(std::shared_ptr<MapEnv> env, std::optional<int64_t> snapshot_created_ms);
  // The environment held now (null when none).
  std::shared_ptr<MapEnv> env() const;
  SlotFacts Facts() const;

  // Maintenance. Replaces the environment with `env` when one is held and it differs (a refresh, counted),
  // building its read index first (outside the lock: lookups go on with the old one); true when it did.
  bool ReplaceIfChanged(const std::shared_ptr<MapEnv>& env, std::optional<int64_t> snapshot_created_ms);
  // Maintenance. Builds the read index anew when the one held is no longer current (a merge since) or none is
  // held, outside the lock, and publishes it; `stop` (may be null) turning true ends a long build early. A build takes at most a tenth of the time: after one of d ms the
  // next waits 9 d ms, so a shard merged into all the time is indexed now and then, not rebuilt without end
  // (lookups between answer through the store type, as fresh as ever).
  void RefreshIndex(const std::atomic<bool>* stop);
  // A refresh (a fetch of a newer snapshot, a reopen) that failed, for Stats.
  void NoteRefreshFailure(const Status& why);
  // Keys refused before any thread context was involved (a key of the wrong kind): counted here, rare.
  void CountRefusedKey() { refused_keys_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t refused_keys() const { return refused_keys_.load(std::memory_order_relaxed); }
  // Notes whether lookups ran since the last call and lets go of the environment when none ran for `keep_ms`;
  // true when it let go.
  bool DropIfIdle(int64_t now_ms, int64_t keep_ms);

 private:
  void PublishLocked(std::shared_ptr<MapEnv> env, std::optional<int64_t> snapshot_created_ms,
                     std::shared_ptr<const AnswerIndex> index);
  // The read index of `env` (null when the map has none, or the build failed: index_error_ says why). Takes the
  // lock only to note the outcome.
  std::shared_ptr<const AnswerIndex> BuildIndex(const std::shared_ptr<MapEnv>& env, const std::atomic<bool>* stop);
  // The index to publish with a newly opened or replaced `env`: a ranged map's, built now (with the lock held by
  // the caller when `locked`); none for a text-keyed map (maintenance builds it).
  std::shared_ptr<const AnswerIndex> IndexOnOpen(const std::shared_ptr<MapEnv>& env, bool locked);
  // REQUIRES: mutex_ held. Records a build's outcome (index_error_, and what a failure was built from).
  void NoteBuildLocked(const Status& built, const std::shared_ptr<MapEnv>& env, uint64_t txn_id);
  // REQUIRES: mutex_ held. Opens the environment when none is held (unless a failure is still fresh and not
  // `force`); on return either env_ is set or failure_ says why not.
  void OpenLocked(Runtime& runtime, bool force);

  const uint32_t index_;
  const std::shared_ptr<const MapPlugins> plugins_;
  const bool number_keys_;
  const bool uses_time_;
  const ReadIndexKind index_kind_;
  const size_t cache_bytes_;
  const std::string text_key_error_;
  const std::string number_key_error_;
  const std::string time_error_;

  alignas(64) std::atomic<uint64_t> generation_{1};
  std::atomic<bool> used_{false};
  std::atomic<uint64_t> refused_keys_{0};

  alignas(64) mutable std::mutex mutex_;
  std::shared_ptr<MapEnv> env_;
  std::shared_ptr<const AnswerIndex> read_index_;  // of env_, or null
  std::string index_error_;
  int64_t next_index_build_ms_ = 0;  // RefreshIndex's duty-cycle limit
  // The environment and transaction of the last build that failed: not tried again until either changes (a map
  // over its read_index_max_size would otherwise be read whole again and again).
  std::weak_ptr<MapEnv> failed_env_;
  uint64_t index_builds_ = 0;
  uint64_t failed_txn_id_ = 0;
  std::optional<int64_t> snapshot_created_ms_;
  uint64_t refreshes_ = 0, refresh_failures_ = 0;
  std::string last_refresh_error_;
  Status failure_;  // the last failed open, answered until retry_after_ms_
  int64_t retry_after_ms_ = 0;
  int64_t last_used_ms_ = 0;  // when maintenance last saw lookups (or the environment was opened)
};

}  // namespace planb
