#include "host/snapshot/snapshot_manager.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/maintain/maintenance_marks.h"
#include "host/snapshot/snapshot_diff_apply.h"
#include "host/snapshot/unsynced_snapshot.h"
#include "host/storage/lmdb_verifier.h"
#include "host/snapshot/snapshot_dir.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

using Clock = std::chrono::steady_clock;

// A snapshot directory can vanish between listing and locking only when a newer one replaced it and a cleanup
// deleted it; listing again finds the newer one. This bounds the loop should something keep replacing them.
constexpr int kMaxListAttempts = 16;

// In each snapshot directory: the name of the storage node it was fetched from.
constexpr char kSourceFileName[] = "source";
// Past the kernel's default dirty_expire_centisecs (30 s): by then the kernel has written most of the pages back.
constexpr int64_t kUnsyncedSnapshotSyncAfterMs = 60 * 1000;

}  // namespace

OpenSnapshot::~OpenSnapshot() {
  env_.reset();  // the environment closes before the directory is let go for deletion
  UnlockSnapshot(dir_fd_);
}

class SnapshotManager::Impl {
 public:
  Impl(const Home& home, const ClusterConfig& cluster, const MapCatalog& catalog, zmq::context_t& context,
       FetchProgress progress)
      : home_(home), cluster_(cluster), catalog_(catalog), context_(context), progress_(std::move(progress)) {
    for (const auto& [name, plugins] : catalog_.maps()) {
      auto state = std::make_unique<MapState>(home_.snapshots() + "/" + name);
      state->name = name;
      state->plugins = plugins;
      states_.emplace(name, std::move(state));
    }
  }

  Status Current(std::string_view map, StaleSnapshot stale, std::shared_ptr<const OpenSnapshot>* out);
  // Fetches a newer snapshot of `map` (only when one is due, with `only_if_due`).
  Status Refresh(std::string_view map, bool only_if_due, bool* changed, bool accept_older);
  Status Describe(std::vector<SnapshotInfo>* out);
  Status Cleanup(CleanupReport* report);
  uint64_t fetches_started() const { return fetches_started_.load(); }

 private:
  using Snapshot = std::shared_ptr<const OpenSnapshot>;

  struct MapState {
    explicit MapState(std::string path) : dir(std::move(path)) {}
    const SnapshotDir dir;
    std::string name;
    std::shared_ptr<const MapPlugins> plugins;

    std::mutex mutex;  // guards everything below
    std::condition_variable fetch_ended;
    bool fetching = false;      // a thread of this process is fetching; others wait for its result
    uint64_t fetch_round = 0;   // counts fetches that ended
    Status fetch_status;        // the last fetch's result
    bool fetch_changed = false;
    Snapshot current;               // the manager's reference to the newest, until cleanup lets go of it
    std::weak_ptr<const OpenSnapshot> last;  // the newest opened, while anyone holds it
    Clock::time_point handed_out;
    bool discarded = false;  // a corrupt newest snapshot was removed: fetch before trusting an older one
    Status discarded_why;    // what was wrong with it, for the error when no fetch replaces it
  };

  Status Find(std::string_view map, MapState** state) const;
  // The newest complete snapshot on disk, open (reusing the one held when it is still the newest); null when
  // there is none. REQUIRES: state.mutex held.
  Status Newest(MapState& state, Snapshot* out);
  Status Open(MapState& state, int64_t create_time_ms, Snapshot* out, bool* vanished);
  // Removes a snapshot that does not open as a map (truncated, damaged), so that a fresh one is fetched.
  Status Discard(MapState& state, int64_t create_time_ms, const Status& why);
  // Whether `snapshot` is older than min_time_to_keep_snapshots and no fetch failed within the retry interval.
  bool Due(const MapState& state, const OpenSnapshot* snapshot, int64_t now_ms) const;
  // One fetch per map in this process: the first thread fetches, the others wait for its result. `held` is the
  // newest snapshot when the fetch was decided, at `decided_ms`. REQUIRES: `lock` holds state.mutex (released
  // while fetching or waiting). `wait_for_turn`: see FetchAmongProcesses.
  Status SharedFetch(std::unique_lock<std::mutex>& lock, MapState& state, const Snapshot& held, int64_t decided_ms,
                     bool* changed, bool wait_for_turn = true, bool accept_older = false);
  // Takes the map's turn among processes, re-checks the disk, fetches, verifies and installs. Without
  // `wait_for_turn`, when another process has the turn (it is fetching this map), returns at once with nothing
  // changed: a command that holds a usable snapshot serves it rather than wait on another's fetch, however slow.
  Status FetchAmongProcesses(MapState& state, const Snapshot& held, int64_t decided_ms, bool* changed,
                             bool wait_for_turn, bool accept_older);
  Status Fetch(MapState& state, const Snapshot& held, int64_t newest_ms, bool* changed, bool accept_older);
  // Unpacks and verifies a downloaded zip into `scratch_dir`, which must then hold exactly the map.
  Status CheckZip(const MapState& state, const std::string& zip_path, const std::string& scratch_dir);
  // Merges the diff at `zip_path` into a copy of `held` in `scratch_dir`/<map>/ (snapshot_diff_apply.h).
  Status ApplyDiff(const MapState& state, const OpenSnapshot& held, const std::string& zip_path,
                   const ContentVersion& offered, const std::string& scratch_dir);
  Status CleanupMap(const MapState& state, CleanupReport* report);

  const Home& home_;
  const ClusterConfig& cluster_;
  const MapCatalog& catalog_;
  zmq::context_t& context_;
  const FetchProgress progress_;
  std::map<std::string, std::unique_ptr<MapState>, std::less<>> states_;  // fixed at construction
  std::atomic<uint64_t> fetches_started_{0};
};

Status SnapshotManager::Impl::Find(std::string_view map, MapState** state) const {
  const auto found = states_.find(NormaliseMapName(map));
  if (found == states_.end()) {
    std::shared_ptr<const MapPlugins> unused;
    Status s = catalog_.Get(map, &unused);  // its message names the map and the known ones
    return s.ok() ? Status::NotFound("snapshot of " + std::string(map) + ": map not configured") : s;
  }
  *state = found->second.get();
  return Status::Ok();
}

Status SnapshotManager::Impl::Open(MapState& state, int64_t create_time_ms, Snapshot* out, bool* vanished) {
  const std::string path = state.dir.SnapshotPath(create_time_ms);
  int fd = -1;
  PLANB_RETURN_IF_ERROR(LockSnapshotShared(path, &fd, vanished));
  if (*vanished) return Status::Ok();
  std::shared_ptr<OpenSnapshot> snapshot(new OpenSnapshot());
  snapshot->dir_fd_ = fd;  // from here the destructor lets go of the lock
  snapshot->create_time_ms_ = create_time_ms;
  // One a diff installed unsynced before a reboot may have lost pages: kCorruption, so it is discarded.
  PLANB_RETURN_IF_ERROR(CheckUnsyncedSnapshot(path));
  PLANB_RETURN_IF_ERROR(
      MapEnv::Open(path, state.plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &snapshot->env_));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(snapshot->env_->env(), MDB_RDONLY).WithContext(path));
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), snapshot->env_->meta(), &snapshot->version_).WithContext(path));
  *out = std::move(snapshot);
  return Status::Ok();
}

Status SnapshotManager::Impl::Newest(MapState& state, Snapshot* out) {
  for (int attempt = 0; attempt < kMaxListAttempts; ++attempt) {
    int64_t newest = 0;
    PLANB_RETURN_IF_ERROR(state.dir.Newest(&newest));
    if (newest == 0) {
      out->reset();
      return Status::Ok();
    }
    Snapshot held = state.current ? state.current : state.last.lock();
    if (held != nullptr && held->create_time_ms() == newest) {
      state.current = held;
      *out = std::move(held);
      return Status::Ok();
    }
    bool vanished = false;
    Snapshot opened;
    const Status s = Open(state, newest, &opened, &vanished);
    if (s.code() == Code::kCorruption) {
      PLANB_RETURN_IF_ERROR(Discard(state, newest, s));
      continue;
    }
    PLANB_RETURN_IF_ERROR(s);
    if (vanished) continue;
    state.current = opened;
    state.last = opened;
    *out = std::move(opened);
    return Status::Ok();
  }
  return Status::IOError("snapshot of " + state.name + ": the newest snapshot in " + state.dir.path() +
                         " kept vanishing while being opened");
}

Status SnapshotManager::Impl::Discard(MapState& state, int64_t create_time_ms, const Status& why) {
  const std::string path = state.dir.SnapshotPath(create_time_ms);
  const std::string doomed = state.dir.Entry(SnapshotDir::NewDeleteScratchName());
  if (::rename(path.c_str(), doomed.c_str()) != 0) {
    if (errno == ENOENT) return Status::Ok();  // another process discarded it first
    return why.WithContext("snapshot of " + state.name + ": cannot remove the damaged snapshot (" +
                           std::strerror(errno) + ")");
  }
  state.discarded = true;
  state.discarded_why = why;
  return RemoveTree(doomed);
}

bool SnapshotManager::Impl::Due(const MapState& state, const OpenSnapshot* snapshot, int64_t now_ms) const {
  if (snapshot != nullptr) {
    const int64_t fresh_since = std::max(snapshot->create_time_ms(), state.dir.MarkerTimeMs(kCheckedMarker));
    if (now_ms - fresh_since < cluster_.min_time_to_keep_snapshots_ms) return false;
  }
  const int64_t failed = state.dir.MarkerTimeMs(kFailedMarker);
  return failed == 0 || now_ms - failed >= cluster_.snapshot_retry_fetch_interval_ms;
}

Status SnapshotManager::Impl::Current(std::string_view map, StaleSnapshot stale, Snapshot* out) {
  MapState* state = nullptr;
  PLANB_RETURN_IF_ERROR(Find(map, &state));
  std::unique_lock<std::mutex> lock(state->mutex);
  Snapshot snapshot;
  PLANB_RETURN_IF_ERROR(Newest(*state, &snapshot));
  const int64_t now_ms = CurrentTimeMs();
  if (snapshot == nullptr) {
    bool changed = false;
    const Status fetched = SharedFetch(lock, *state, nullptr, now_ms, &changed);
    if (!fetched.ok() && state->discarded) {
      return Status(fetched.code(), fetched.message() + " (the snapshot on disk was removed: " +
                                        state->discarded_why.message() + ")");
    }
    PLANB_RETURN_IF_ERROR(fetched);
    state->discarded = false;
    PLANB_RETURN_IF_ERROR(Newest(*state, &snapshot));
    if (snapshot == nullptr) {
      return Status::Internal("snapshot of " + state->name + ": a fetch succeeded, but " + state->dir.path() +
                              " holds no snapshot");
    }
  } else if (state->discarded || (stale == StaleSnapshot::kFetchNow && Due(*state, snapshot.get(), now_ms))) {
    // A failed fetch is recorded (.failed) and the snapshot held keeps serving.
    bool changed = false;
    if (SharedFetch(lock, *state, snapshot, now_ms, &changed, /*wait_for_turn=*/false).ok()) {
      state->discarded = false;
      if (changed) PLANB_RETURN_IF_ERROR(Newest(*state, &snapshot));
    }
  }
  state->handed_out = Clock::now();
  *out = std::move(snapshot);
  return Status::Ok();
}

Status SnapshotManager::Impl::Refresh(std::string_view map, bool only_if_due, bool* changed, bool accept_older) {
  *changed = false;
  MapState* state = nullptr;
  PLANB_RETURN_IF_ERROR(Find(map, &state));
  std::unique_lock<std::mutex> lock(state->mutex);
  Snapshot snapshot;
  PLANB_RETURN_IF_ERROR(Newest(*state, &snapshot));
  const int64_t now_ms = CurrentTimeMs();
  if (only_if_due && !Due(*state, snapshot.get(), now_ms)) return Status::Ok();
  return SharedFetch(lock, *state, snapshot, now_ms, changed, /*wait_for_turn=*/true, accept_older);
}

Status SnapshotManager::Impl::Describe(std::vector<SnapshotInfo>* out) {
  out->clear();
  for (auto& [name, state] : states_) {
    std::unique_lock<std::mutex> lock(state->mutex);
    Snapshot snapshot;
    PLANB_RETURN_IF_ERROR(Newest(*state, &snapshot));
    if (snapshot == nullptr) continue;
    SnapshotInfo info;
    info.map = name;
    info.create_time_ms = snapshot->create_time_ms();
    info.version = snapshot->version();
    std::string source;
    if (ReadSmallFile(state->dir.SnapshotPath(info.create_time_ms) + "/" + kSourceFileName, &source).ok()) {
      info.source_node = source.substr(0, source.find('\n'));
    }
    std::string ahead;
    if (ReadSmallFile(state->dir.Entry(kAheadMarker), &ahead).ok()) info.ahead_of_nodes = ahead.substr(0, ahead.find('\n'));
    out->push_back(std::move(info));
  }
  return Status::Ok();
}

Status SnapshotManager::Impl::SharedFetch(std::unique_lock<std::mutex>& lock, MapState& state, const Snapshot& held,
                                          int64_t decided_ms, bool* changed, bool wait_for_turn,
                                          bool accept_older) {
  if (state.fetching) {
    const uint64_t round = state.fetch_round;
    state.fetch_ended.wait(lock, [&] { return state.fetch_round != round; });
    *changed = state.fetch_changed;
    return state.fetch_status;
  }
  state.fetching = true;
  lock.unlock();
  bool fetched_changed = false;
  Status status;
  try {
    status = FetchAmongProcesses(state, held, decided_ms, &fetched_changed, wait_for_turn, accept_older);
  } catch (const std::exception& e) {
    // Whatever threw, the threads waiting for this fetch must be woken with an answer, not left waiting forever.
    status = Status::Internal("snapshot fetch: " + std::string(e.what()));
  }
  lock.lock();
  state.fetching = false;
  ++state.fetch_round;
  state.fetch_status = status;
  state.fetch_changed = fetched_changed;
  state.fetch_ended.notify_all();
  *changed = fetched_changed;
  return status;
}

Status SnapshotManager::Impl::FetchAmongProcesses(MapState& state, const Snapshot& held, int64_t decided_ms,
                                                  bool* changed, bool wait_for_turn, bool accept_older) {
  *changed = false;
  // A home this process may not write (another user's, a read-only mount) can still serve the snapshots it has.
  const std::string cannot = "snapshot of " + state.name + ": cannot fetch one (the home must be writable to fetch)";
  PLANB_RETURN_IF_ERROR(MakeDirectories(state.dir.path()).WithContext(cannot));
  FileLock turn;
  if (wait_for_turn) {
    PLANB_RETURN_IF_ERROR(turn.Acquire(state.dir.Entry(kFetchLockName)).WithContext(cannot));
  } else {
    bool mine = false;
    PLANB_RETURN_IF_ERROR(turn.TryAcquire(state.dir.Entry(kFetchLockName), &mine).WithContext(cannot));
    if (!mine) return Status::Ok();  // another process is fetching it; the snapshot held serves meanwhile
  }
  // While this waited, another process may have installed a newer snapshot or heard that ours is current.
  int64_t newest = 0;
  PLANB_RETURN_IF_ERROR(state.dir.Newest(&newest));
  const int64_t held_ms = held != nullptr ? held->create_time_ms() : 0;
  if (newest > held_ms) {
    *changed = true;
    return Status::Ok();
  }
  if (held != nullptr && state.dir.MarkerTimeMs(kCheckedMarker) >= decided_ms) return Status::Ok();
  Status status = Fetch(state, held, newest, changed, accept_older);
  if (!status.ok()) {
    (void)state.dir.Touch(kFailedMarker);  // the fetch's error says more than a failure to record it
    return status;
  }
  return state.dir.RemoveMarker(kFailedMarker);
}

Status SnapshotManager::Impl::Fetch(MapState& state, const Snapshot& held, int64_t newest_ms, bool* changed,
                                   bool accept_older) {
  ++fetches_started_;
  const ContentVersion have = held != nullptr ? held->version() : ContentVersion();
  const std::string scratch = state.dir.Entry(SnapshotDir::NewFetchScratchName());
  const std::string zip = scratch + ".zip";
  // A snapshot held can be brought up to date by a diff (the batches merged since): it says where it stands.
  std::optional<SnapshotSince> since;
  if (held != nullptr && !have.empty()) {
    MaintenanceMarks marks;
    Txn txn;
    Status read = txn.Begin(held->env()->env(), MDB_RDONLY);
    if (read.ok()) read = ReadMaintenanceMarks(txn.get(), held->env()->meta(), &marks);
    if (read.ok()) since = SnapshotSince{have, marks.last_condensed_ms};  // else the whole snapshot, as before
  }
  FetchOutcome outcome;
  Status status = FetchSnapshot(
      context_, cluster_, state.name, have, zip, &outcome, progress_,
      [&](const std::string& zip_path, const FetchOutcome& fetched) {
        if (!fetched.diff) return CheckZip(state, zip_path, scratch);
        return ApplyDiff(state, *held, zip_path, fetched.version, scratch);
      },
      accept_older, since);
  if (!status.ok() && outcome.held_ahead_of_nodes) {
    // Loud where an operator looks (`planb stores`), until a fetch succeeds; the snapshot held keeps serving.
    (void)WriteFileAtomically(state.dir.Entry(kAheadMarker), status.message() + "\n");
  } else if (status.ok()) {
    status = state.dir.RemoveMarker(kAheadMarker);
  }
  if (status.ok() && outcome.not_modified) {
    status = state.dir.Touch(kCheckedMarker);
  } else if (status.ok()) {
    // Named by this machine's clock (age is judged by it), after the newest even if the clock went back.
    int64_t create_time = std::max(CurrentTimeMs(), newest_ms + 1);
    while (::access(state.dir.SnapshotPath(create_time).c_str(), F_OK) == 0) ++create_time;
    const std::string target = state.dir.SnapshotPath(create_time);
    // Which node it came from, for `planb stores`; inside the snapshot so that it goes with it.
    status = WriteFileAtomically(scratch + "/" + state.name + "/" + kSourceFileName, outcome.node + "\n");
    if (status.ok()) status = DurableRename(scratch + "/" + state.name, target);
    if (status.ok()) status = ApplyHomeMode(target);  // unpacked by libzip's rules; the home's modes apply
    if (status.ok()) status = ApplyHomeMode(target + "/data.mdb");
    if (status.ok()) status = SyncPath(target);
    *changed = status.ok();
  }
  ::unlink(zip.c_str());
  Status removed = RemoveTree(scratch);
  return status.ok() ? removed : status;
}

Status SnapshotManager::Impl::CheckZip(const MapState& state, const std::string& zip_path,
                                       const std::string& scratch_dir) {
  UnzipLimits limits;
  limits.max_total_bytes = state.plugins->config().max_store_size;  // a copy of a shard is no larger than one
  std::vector<std::string> maps;
  Status status = UnzipBatch(zip_path, scratch_dir, limits, &maps);
  if (status.ok() && (maps.size() != 1 || maps[0] != state.name)) {
    std::string names;
    for (const std::string& m : maps) names += (names.empty() ? "" : ", ") + m;
    status = Status::Invalid(zip_path + ": holds map(s) " + (names.empty() ? "(none)" : names) + ", expected only " +
                             state.name);
  }
  if (status.ok()) status = VerifyExtractedBatch(catalog_, zip_path, scratch_dir, maps);
  if (!status.ok()) {
    (void)RemoveTree(scratch_dir);
    if (status.code() != Code::kIOError && status.code() != Code::kFull) {
      return Status(status.code(), "snapshot does not verify: " + status.message());
    }
  }
  return status;
}

Status SnapshotManager::Impl::ApplyDiff(const MapState& state, const OpenSnapshot& held, const std::string& zip_path,
                                        const ContentVersion& offered, const std::string& scratch_dir) {
  Status status = MakeDirectories(scratch_dir);
  AppliedDiff applied;
  if (status.ok()) {
    status = ApplySnapshotDiff(catalog_, state.plugins, zip_path, held.path(), held.version(), offered, scratch_dir,
                               &applied);
  }
  if (!status.ok()) {
    (void)RemoveTree(scratch_dir);
    if (status.code() != Code::kIOError && status.code() != Code::kFull) {
      return Status(status.code(), "snapshot diff does not apply: " + status.message());
    }
  }
  return status;
}

Status SnapshotManager::Impl::Cleanup(CleanupReport* report) {
  *report = CleanupReport();
  const Clock::time_point now = Clock::now();
  const auto idle = std::chrono::milliseconds(cluster_.min_time_to_keep_env_open_ms);
  for (auto& [name, state] : states_) {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->current != nullptr && now - state->handed_out >= idle) {
      state->current.reset();  // holders keep theirs; `last` finds it again while they do
      ++report->envs_closed;
    }
  }
  Status first_error;
  for (auto& [name, state] : states_) {
    Status s = CleanupMap(*state, report);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

Status SnapshotManager::Impl::CleanupMap(const MapState& state, CleanupReport* report) {
  std::vector<int64_t> times;
  PLANB_RETURN_IF_ERROR(state.dir.List(&times));
  Status first_error;
  auto note = [&first_error](Status s) {
    if (!s.ok() && first_error.ok()) first_error = std::move(s);
  };
  // Every snapshot but the newest that nobody holds: renamed away under the exclusive lock (so no opener can
  // find it any more), then removed.
  for (size_t i = 0; i + 1 < times.size(); ++i) {
    const std::string path = state.dir.SnapshotPath(times[i]);
    int fd = -1;
    Status s = TryLockSnapshotExclusive(path, &fd);
    if (!s.ok() || fd < 0) {
      note(std::move(s));
      continue;
    }
    const std::string doomed = state.dir.Entry(SnapshotDir::NewDeleteScratchName());
    s = DurableRename(path, doomed);
    UnlockSnapshot(fd);
    if (s.ok()) s = RemoveTree(doomed);
    if (s.ok()) report->deleted.push_back(path);
    note(std::move(s));
  }
  // The newest, when a diff installed it unsynced (unsynced_snapshot.h) long enough ago for the kernel to have
  // written it back: synced now, cheaply, so that a reboot does not cost a fetch.
  if (!times.empty()) {
    bool synced = false;
    note(SyncUnsyncedSnapshot(state.dir.SnapshotPath(times.back()), kUnsyncedSnapshotSyncAfterMs, &synced));
    if (synced) report->synced.push_back(state.dir.SnapshotPath(times.back()));
  }
  // Scratch of processes that are gone (a crash mid-fetch or mid-delete).
  std::vector<std::string> abandoned;
  DIR* dir = ::opendir(state.dir.path().c_str());
  if (dir != nullptr) {
    while (const struct dirent* entry = ::readdir(dir)) {
      pid_t pid = 0;
      if (ParseScratchOwner(entry->d_name, &pid) && pid != ::getpid() && !ProcessAlive(pid)) {
        abandoned.push_back(state.dir.Entry(entry->d_name));
      }
    }
    ::closedir(dir);
  }
  for (const std::string& path : abandoned) {
    Status s = RemoveTree(path);
    if (s.ok()) report->deleted.push_back(path);
    note(std::move(s));
  }
  return first_error;
}

SnapshotManager::SnapshotManager(const Home& home, const ClusterConfig& cluster, const MapCatalog& catalog,
                                 zmq::context_t& context, FetchProgress progress)
    : impl_(std::make_unique<Impl>(home, cluster, catalog, context, std::move(progress))) {}

SnapshotManager::~SnapshotManager() = default;

Status SnapshotManager::Current(std::string_view map, StaleSnapshot stale, std::shared_ptr<const OpenSnapshot>* out) {
  return impl_->Current(map, stale, out);
}

Status SnapshotManager::RefreshIfDue(std::string_view map, bool* changed) {
  return impl_->Refresh(map, /*only_if_due=*/true, changed, /*accept_older=*/false);
}

Status SnapshotManager::Refresh(std::string_view map, bool* changed, bool accept_older) {
  return impl_->Refresh(map, /*only_if_due=*/false, changed, accept_older);
}

Status SnapshotManager::Describe(std::vector<SnapshotInfo>* out) { return impl_->Describe(out); }

Status SnapshotManager::Cleanup(CleanupReport* report) { return impl_->Cleanup(report); }

uint64_t SnapshotManager::fetches_started() const { return impl_->fetches_started(); }

}  // namespace planb
