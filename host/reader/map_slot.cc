#include "host/reader/map_slot.h"

#include <chrono>

#include "host/common/iso_time.h"
#include "host/plugin_host/key_format.h"
#include "host/reader/open_map.h"

namespace planb {
namespace {

char FoldCase(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// A lookup's answer is a function of the key and the map's data alone, and is only a value: a hot-key cache
// (hot_key_cache.h) may keep it for as long as the data does not change.
bool Cacheable(const MapPlugins& plugins) {
  const PluginDescriptor& d = plugins.type_descriptor();
  if (d.lookup_key != LookupKeyKind::kText || d.lookup_uses_time) return false;
  for (uint32_t i = 0; i < d.field_count; ++i) {
    if (d.fields[i].field == RowField::kOwn || d.fields[i].field == RowField::kStart) return false;
  }
  return true;
}

std::string Describe(const MapPlugins& plugins) {
  return "map " + plugins.config().name + " (type " + plugins.type_descriptor().name + ")";
}

}  // namespace

MapSlot::MapSlot(uint32_t index, std::shared_ptr<const MapPlugins> plugins)
    : index_(index),
      plugins_(std::move(plugins)),
      number_keys_(TakesNumberKeys(plugins_->type_descriptor(), plugins_->config())),
      uses_time_(plugins_->type_descriptor().lookup_uses_time),
      index_kind_(plugins_->config().read_index_max_size > 0 ? ReadIndexKindOf(*plugins_) : ReadIndexKind::kNone),
      cache_bytes_(Cacheable(*plugins_) ? plugins_->config().lookup_cache_size : 0),
      text_key_error_(Describe(*plugins_) + " is keyed by signed 64-bit numbers, not text"),
      number_key_error_(Describe(*plugins_) + " is keyed by text, not numbers"),
      time_error_(Describe(*plugins_) + " has no time; look it up without one") {}

bool MapSlot::Matches(std::string_view name) const {
  const std::string& mine = plugins_->config().name;  // lower case already
  if (name.size() != mine.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (FoldCase(name[i]) != mine[i]) return false;
  }
  return true;
}

void MapSlot::OpenLocked(Runtime& runtime, bool force) {
  if (env_ != nullptr) return;
  const int64_t now = CurrentTimeMs();
  if (!force && !failure_.ok() && now < retry_after_ms_) return;
  std::shared_ptr<MapEnv> opened;
  std::optional<int64_t> created;
  Status s = OpenMapForReading(runtime, name(), StaleSnapshot::kUseCurrent, &opened, &created);
  if (!s.ok()) {
    failure_ = std::move(s);
    retry_after_ms_ = now + kRetryIntervalMs;
    return;
  }
  failure_ = Status::Ok();
  last_used_ms_ = now;
  // A ranged map's is built here, under the lock, at the first open only: the threads waiting for the
  // environment wait for the index too, and the first lookups are then as fast as the rest. Later ones are built
  // beside the lookups.
  std::shared_ptr<const AnswerIndex> index = IndexOnOpen(opened, /*locked=*/true);
  PublishLocked(std::move(opened), created, std::move(index));
}

std::shared_ptr<const AnswerIndex> MapSlot::IndexOnOpen(const std::shared_ptr<MapEnv>& env, bool locked) {
  if (index_kind_ != ReadIndexKind::kRange || env == nullptr) return nullptr;
  const uint64_t txn_id = LastCommittedTxnId(*env);  // what a failure is remembered by (a later one is newer)
  std::shared_ptr<const AnswerIndex> index;
  Status built = BuildAnswerIndex(env, plugins_->config().read_index_max_size, /*stop=*/nullptr, &index);
  if (locked) {
    NoteBuildLocked(built, env, txn_id);
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    NoteBuildLocked(built, env, txn_id);
  }
  return index;
}

std::shared_ptr<const AnswerIndex> MapSlot::BuildIndex(const std::shared_ptr<MapEnv>& env,
                                                       const std::atomic<bool>* stop) {
  const uint64_t txn_id = LastCommittedTxnId(*env);
  std::shared_ptr<const AnswerIndex> index;
  Status built = BuildAnswerIndex(env, plugins_->config().read_index_max_size, stop, &index);
  std::lock_guard<std::mutex> lock(mutex_);
  NoteBuildLocked(built, env, txn_id);
  return index;
}

void MapSlot::NoteBuildLocked(const Status& built, const std::shared_ptr<MapEnv>& env, uint64_t txn_id) {
  ++index_builds_;
  index_error_ = built.ok() ? "" : built.message();
  failed_env_ = built.ok() ? std::weak_ptr<MapEnv>() : std::weak_ptr<MapEnv>(env);
  failed_txn_id_ = txn_id;
}

void MapSlot::RefreshIndex(const std::atomic<bool>* stop) {
  if (!indexed()) return;
  std::shared_ptr<MapEnv> env;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (env_ == nullptr || (read_index_ != nullptr && read_index_->IsCurrent())) return;
    if (CurrentTimeMs() < next_index_build_ms_) return;
    if (failed_env_.lock() == env_ && LastCommittedTxnId(*env_) == failed_txn_id_) return;  // would fail again
    env = env_;
  }
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<const AnswerIndex> index = BuildIndex(env, stop);
  const int64_t took_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  std::lock_guard<std::mutex> lock(mutex_);
  next_index_build_ms_ = CurrentTimeMs() + 9 * took_ms;
  if (env_ != env || index == nullptr) return;  // moved on meanwhile, or failed (index_error_ says why)
  read_index_ = std::move(index);
  generation_.fetch_add(1, std::memory_order_release);  // threads take the new index at their next lookup
}

// Opening under the lock: threads that all find no environment cause one open (one snapshot fetch).
Status MapSlot::Acquire(Runtime& runtime, bool force, std::shared_ptr<MapEnv>* env, uint64_t* generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  OpenLocked(runtime, force);
  if (env_ == nullptr) return failure_;
  *env = env_;
  *generation = generation_.load(std::memory_order_relaxed);
  return Status::Ok();
}

Code MapSlot::AcquireForLookup(Runtime& runtime, std::shared_ptr<MapEnv>* env,
                               std::shared_ptr<const AnswerIndex>* index, uint64_t* generation,
                               ErrorBuffer* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  OpenLocked(runtime, /*force=*/false);
  if (env_ == nullptr) {
    return Fail(error, failure_.code(), "%s", failure_.message().c_str());
  }
  *env = env_;
  *index = read_index_;
  *generation = generation_.load(std::memory_order_relaxed);
  return Code::kOk;
}

void MapSlot::Publish(std::shared_ptr<MapEnv> env, std::optional<int64_t> snapshot_created_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (env != nullptr) last_used_ms_ = CurrentTimeMs();
  std::shared_ptr<const AnswerIndex> index = IndexOnOpen(env, /*locked=*/true);
  PublishLocked(std::move(env), snapshot_created_ms, std::move(index));
}

void MapSlot::PublishLocked(std::shared_ptr<MapEnv> env, std::optional<int64_t> snapshot_created_ms,
                            std::shared_ptr<const AnswerIndex> index) {
  env_ = std::move(env);
  read_index_ = std::move(index);
  snapshot_created_ms_ = env_ == nullptr ? std::nullopt : snapshot_created_ms;
  // Release: a lookup that sees the new generation and comes for the environment finds it (under the mutex
  // anyway); the order matters for nothing else.
  generation_.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<MapEnv> MapSlot::env() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return env_;
}

SlotFacts MapSlot::Facts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  SlotFacts facts;
  facts.env = env_;
  facts.snapshot_created_ms = snapshot_created_ms_;
  facts.refreshes = refreshes_;
  facts.refresh_failures = refresh_failures_;
  facts.last_refresh_error = last_refresh_error_;
  facts.index = read_index_;
  facts.index_error = index_error_;
  facts.index_builds = index_builds_;
  return facts;
}

bool MapSlot::ReplaceIfChanged(const std::shared_ptr<MapEnv>& env, std::optional<int64_t> snapshot_created_ms) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (env_ == nullptr || env == nullptr || env_ == env) return false;
  }
  std::shared_ptr<const AnswerIndex> index = IndexOnOpen(env, /*locked=*/false);
  std::lock_guard<std::mutex> lock(mutex_);
  if (env_ == nullptr || env_ == env) return false;  // let go of, or replaced, while the index was built
  PublishLocked(env, snapshot_created_ms, std::move(index));
  ++refreshes_;
  return true;
}

void MapSlot::NoteRefreshFailure(const Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++refresh_failures_;
  last_refresh_error_ = why.message();
}

bool MapSlot::DropIfIdle(int64_t now_ms, int64_t keep_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (used_.exchange(false, std::memory_order_relaxed)) {
    last_used_ms_ = now_ms;
    return false;
  }
  if (env_ == nullptr || now_ms - last_used_ms_ < keep_ms) return false;
  PublishLocked(nullptr, std::nullopt, nullptr);
  return true;
}

}  // namespace planb
