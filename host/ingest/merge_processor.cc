#include "host/ingest/merge_processor.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <limits>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "host/catchup/batch_retention.h"
#include "host/common/crash_report.h"
#include "host/common/disk_room.h"
#include "host/common/fault_point.h"
#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/delete_merge.h"
#include "host/ingest/merge_batch_map.h"
#include "host/ingest/merge_map.h"
#include "host/ingest/merge_schedule.h"
#include "host/ingest/batch_filter.h"
#include "host/ingest/deletion_fields.h"
#include "host/ingest/tombstones.h"
#include "host/ingest/staging_store.h"
#include "host/storage/shard_compaction.h"
#include "planb/lmdb.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr const char* kLockName = ".lock";

bool Stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

// merging/ only ever holds what was extracted from a zip that is still staged (a batch is unstaged only after
// every map of it committed), so whatever a crash left there is rebuilt from staging/ and can go.
Status ClearScratch(const std::string& merging) {
  std::error_code ec;
  std::vector<std::string> leftovers;
  for (const fs::directory_entry& entry : fs::directory_iterator(merging, ec)) {
    if (entry.path().filename() != kLockName) leftovers.push_back(entry.path().string());
  }
  if (ec) return Status::IOError("listing " + merging + ": " + ec.message());
  for (const std::string& path : leftovers) PLANB_RETURN_IF_ERROR(RemoveTree(path));
  return Status::Ok();
}

Status DurableUnlink(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return Status::IOError("deleting " + path + ": " + std::strerror(errno));
  return SyncPath(fs::path(path).parent_path().string());
}

}  // namespace

MergeProcessor::MergeProcessor(Runtime& runtime, UnzipLimits limits, int threads)
    : runtime_(runtime),
      limits_(limits),
      threads_(std::clamp(threads > 0 ? threads : runtime.config().merge_threads, 1, kMaxMergeSlots)) {}

Status MergeProcessor::MergePending(MergeReport* report, const std::atomic<bool>* stop) {
  const Home& home = runtime_.home();
  FileLock lock;
  bool locked = false;
  // Another process (`planb maintain`, a load merging in-process) may hold the lock for long: a stop ends the
  // wait, and the batches stay staged for the next run.
  PLANB_RETURN_IF_ERROR(lock.AcquireUnless(home.merging() + "/" + kLockName, stop, &locked));
  if (!locked) return Status::Ok();
  PLANB_RETURN_IF_ERROR(ClearScratch(home.merging()));
  // A compaction that died leaves shards/.<map>.compact: the new shard not exchanged yet, or the old one after the
  // exchange (a replacement of an older planb too). Either way nothing needs it once the lock is ours.
  PLANB_RETURN_IF_ERROR(RemoveCompactionLeftovers(home, nullptr));
  PLANB_RETURN_IF_ERROR(FoldMergeDeath(home.staging()));  // the last run died merging: count it first
  MergeBlocks blocks;
  std::vector<QuarantinedBatch> quarantined;
  PLANB_RETURN_IF_ERROR(ListQuarantine(home, &quarantined));
  for (const QuarantinedBatch& batch : quarantined) blocks.Block(batch.maps, batch.maps_known, batch.name);
  std::vector<StagedBatch> staged;
  PLANB_RETURN_IF_ERROR(StagingStore(home).List(&staged));

  std::vector<Attempt> turns(staged.size());
  MergeSchedule schedule;
  for (size_t i = 0; i < staged.size(); ++i) {
    Attempt& turn = turns[i];
    turn.batch = staged[i];
    // A zip whose maps cannot be listed may touch any map: it waits behind everything and holds everything back.
    turn.maps_known = ListBatchMaps(turn.batch.path, &turn.maps).ok();
    turn.before = ReadMergeAttempts(turn.batch.path);
    schedule.Add(MergeSchedule::Batch{turn.maps, turn.maps_known, turn.before.alone});
  }

  // Merges run on worker threads, one per batch in flight, each writing only its own Attempt; everything else (the
  // order, the attempts records, quarantine, the report) is decided here, on the calling thread, after a join.
  std::mutex mutex;
  std::condition_variable done;
  std::vector<size_t> ended;  // indexes of merges that ended and are not handled yet (guarded by `mutex`)
  std::vector<std::thread> workers(turns.size());
  std::vector<int> free_slots;
  for (int slot = threads_ - 1; slot >= 0; --slot) free_slots.push_back(slot);

  Status first_failure;
  Status fatal;  // a record that could not be written: start nothing more, then return it
  bool stopping = false;
  while (true) {
    if (Stopped(stop)) stopping = true;
    while (!stopping && fatal.ok() && !free_slots.empty()) {
      const std::optional<size_t> next = schedule.NextReady();
      if (!next) break;
      Attempt& turn = turns[*next];
      const std::string name = StagingStore::BatchFileName(turn.batch.sequence);
      HeldBatch hold;
      if (blocks.Blocks(turn.maps, turn.maps_known, &hold.map, &hold.by)) {
        hold.sequence = turn.batch.sequence;
        hold.name = name;
        blocks.Block(turn.maps, turn.maps_known, hold.by);
        report->held.push_back(std::move(hold));
        schedule.Finish(*next);
        continue;
      }
      if (turn.before.count >= kMaxMergeAttempts) {
        // The attempts so far all died with the process (or the count was reached and the move failed).
        fatal = Quarantine(turn.batch.path, turn.maps, turn.maps_known, turn.before, report);
        blocks.Block(turn.maps, turn.maps_known, name);
        schedule.Finish(*next);
        continue;
      }
      // Before the attempt: a merge that kills the process is still counted at the next start (merge_attempts.h).
      turn.slot = free_slots.back();
      fatal = MarkMergeInFlight(turn.batch.path, turn.before.count, turn.slot);
      if (!fatal.ok()) break;
      free_slots.pop_back();
      schedule.Start(*next);
      const size_t index = *next;
      workers[index] = std::thread([this, &turn, index, &mutex, &done, &ended, stop] {
        turn.status = MergeBatch(turn.batch.sequence, turn.batch.path, turn.slot, turn.before.count, &turn.part, stop,
                                 &turn.stopped, &turn.blame, &turn.failed_maps);
        std::lock_guard<std::mutex> guard(mutex);
        ended.push_back(index);
        done.notify_one();
      });
    }
    if (schedule.running() == 0) break;
    std::vector<size_t> handle;
    {
      std::unique_lock<std::mutex> guard(mutex);
      done.wait(guard, [&] { return !ended.empty(); });
      handle.swap(ended);
    }
    for (const size_t index : handle) {
      workers[index].join();
      Attempt& turn = turns[index];
      schedule.Finish(index);
      free_slots.push_back(turn.slot);
      const Status recorded = RecordAttempt(turn, report, &blocks, &first_failure);
      if (!recorded.ok() && fatal.ok()) fatal = recorded;
      if (turn.stopped) stopping = true;
    }
  }
  return fatal.ok() ? first_failure : fatal;
}

Status MergeProcessor::RecordAttempt(Attempt& turn, MergeReport* report, MergeBlocks* blocks, Status* first_failure) {
  const Home& home = runtime_.home();
  const MergeReport& part = turn.part;
  for (const auto& [map, rows] : part.rows_merged) report->rows_merged[map] += rows;
  for (const auto& [map, rows] : part.rows_deleted) report->rows_deleted[map] += rows;
  for (const auto& [map, rows] : part.rows_shadowed) report->rows_shadowed[map] += rows;
  report->merged.insert(part.merged.begin(), part.merged.end());
  report->last_sequence = std::max(report->last_sequence, part.last_sequence);
  report->batches += part.batches;
  if (turn.status.ok()) {
    if (turn.stopped) {
      EndMergeInFlight(home.staging(), turn.slot);  // interrupted, not merged: its earlier attempts still count
    } else {
      ClearMergeAttempts(turn.batch.path);
    }
    return Status::Ok();
  }
  // Scratch: the batch stays staged and the next run extracts it afresh.
  (void)RemoveTree(home.merging() + "/" + StagingStore::BatchName(turn.batch.sequence));
  MergeAttempts attempts = turn.before;
  Status s = turn.status;
  // The node's own state (its config, a shard, its disk) says nothing about the batch: not counted; the batch
  // waits, holding its maps, until that is repaired. An I/O error is the local disk's, wherever it arose.
  if (turn.blame == Blame::kNode || s.code() == Code::kIOError) {
    s = Status(s.code(), s.message() + " (a problem of this node, not of the batch: it stays staged and is not "
                                       "counted towards quarantine)");
  } else {
    ++attempts.count;
  }
  attempts.last_error = s.message();
  // When some maps of the batch merged and others failed, only the failed ones wait (and hold their later batches).
  const bool partial = !turn.failed_maps.empty();
  const std::vector<std::string>& waiting = partial ? turn.failed_maps : turn.maps;
  const bool waiting_known = partial || turn.maps_known;
  if (attempts.count >= kMaxMergeAttempts) {
    PLANB_RETURN_IF_ERROR(Quarantine(turn.batch.path, waiting, waiting_known, attempts, report));
  } else {
    PLANB_RETURN_IF_ERROR(WriteMergeAttempts(turn.batch.path, attempts));
    report->failed[turn.batch.sequence] = s.message();
    if (first_failure->ok()) *first_failure = s;
  }
  EndMergeInFlight(home.staging(), turn.slot);  // after the outcome is on disk: a death in between counts it once
  blocks->Block(waiting, waiting_known, StagingStore::BatchFileName(turn.batch.sequence));
  return Status::Ok();
}

Status MergeProcessor::Quarantine(const std::string& zip_path, const std::vector<std::string>& maps, bool maps_known,
                                  const MergeAttempts& attempts, MergeReport* report) {
  QuarantinedBatch moved;
  const std::string reason = "merge failed " + std::to_string(attempts.count) + " times; last: " + attempts.last_error;
  PLANB_RETURN_IF_ERROR(QuarantineBatch(runtime_.home(), zip_path, maps, maps_known, reason, &moved)
                            .WithContext("quarantining " + zip_path));
  report->quarantined.push_back(std::move(moved));
  return Status::Ok();
}

Status MergeProcessor::MergeBatch(uint64_t sequence, const std::string& zip_path, int slot, int count,
                                  MergeReport* report, const std::atomic<bool>* stop, bool* stopped, Blame* blame,
                                  std::vector<std::string>* failed_maps) {
  *blame = Blame::kNode;  // until the batch's own contents are read
  const std::string context = "merging staged batch " + StagingStore::BatchFileName(sequence);
  const std::string batch_dir = runtime_.home().merging() + "/" + StagingStore::BatchName(sequence);
  std::vector<std::string> maps;
  std::string batch_id;
  bool replace = false;
  // merging/ is scratch, extracted again from the staged zip after a crash: not synced (the shard's commit is).
  UnzipLimits scratch = limits_;
  scratch.sync = false;
  scratch.allow_deletes = true;
  Status unzipped = UnzipBatch(zip_path, batch_dir, scratch, &maps, &batch_id, &replace);
  // Room to extract (kFull) and the disk (kIOError) are the node's; anything else is the zip's contents.
  if (!unzipped.ok() && unzipped.code() != Code::kFull && unzipped.code() != Code::kIOError) *blame = Blame::kBatch;
  PLANB_RETURN_IF_ERROR(unzipped.WithContext(context));
  std::sort(maps.begin(), maps.end());
  if (FaultPointActiveFor("merge.abort", batch_id)) std::abort();
  // A map missing from the config or a shard that cannot be opened (truncated, another layout than the config's)
  // stops the batch before any of its maps is merged; the batch stays staged (nothing is lost, the attempt is not
  // counted: *blame is still kNode) until the config or the shard is repaired.
  for (const std::string& map : maps) {
    std::shared_ptr<const MapPlugins> plugins;
    PLANB_RETURN_IF_ERROR(runtime_.catalog().Get(map, &plugins).WithContext(context));
    std::shared_ptr<MapEnv> shard;
    Status s = runtime_.OpenShard(map, &shard);
    if (!s.ok() && s.code() != Code::kNotFound) return s.WithContext(context);
  }
  // Maps whose part failed because of the batch. Handed to the caller (which then holds only them) on the one
  // return that says so, below; every other return leaves `failed_maps` empty, so that all the batch's maps wait.
  std::vector<std::string> failed;
  Status first_failure;
  for (size_t i = 0; i < maps.size(); ++i) {
    if (i > 0 && Stopped(stop)) {
      // The maps merged so far are merged again (idempotently) with the rest next time. A failure already met is
      // still this attempt's outcome (counted), with every map held.
      *stopped = true;
      (void)RemoveTree(batch_dir);
      if (!failed.empty()) {
        *blame = Blame::kBatch;
        return first_failure.WithContext(context);
      }
      return Status::Ok();
    }
    const std::string map_dir = batch_dir + "/" + maps[i];
    std::error_code ec;
    const uint64_t batch_bytes = fs::file_size(map_dir + "/data.mdb", ec);
    // A plugin that kills the process in this map's merge is then named in the batch's attempts and quarantine.
    std::shared_ptr<const MapPlugins> plugins;
    std::string part = "map '" + maps[i] + "'";
    if (runtime_.catalog().Get(maps[i], &plugins).ok()) part += " (" + plugins->Labels() + ")";
    PLANB_RETURN_IF_ERROR(NoteMergeInFlightPart(zip_path, count, slot, part).WithContext(context));
    Status merged;
    {
      const CrashScope crash_scope(LogValue("merging " + part + " of staged batch " +
                                                StagingStore::BatchFileName(sequence),
                                            kMaxRecordedErrorBytes) +
                                   "; the batch stays staged, and this death counts towards its quarantine");
      merged = MergeMap(map_dir, maps[i], batch_id, replace, report, blame);
    }
    if (merged.code() == Code::kIOError) *blame = Blame::kNode;  // the disk's, and maybe a full one (below)
    merged = DescribeDiskFull(merged, runtime_.home().ShardPath(maps[i]), runtime_.home().shards(),
                              ec ? 0 : batch_bytes);
    if (!merged.ok()) {
      // The node's own trouble stops the batch. A map whose part the batch is blamed for waits (its later batches
      // held behind it, then quarantine), and the batch's other maps still merge: each is its own transaction,
      // and a part merged once is skipped when the batch is merged again.
      if (*blame == Blame::kNode) return merged.WithContext(context);
      failed.push_back(maps[i]);
      if (first_failure.ok()) first_failure = merged;
      continue;
    }
    if (i == 0 && maps.size() >= 2) FaultPoint("merge.mid_batch");
  }
  if (!failed.empty()) {
    *blame = Blame::kBatch;
    std::string merged_maps;
    for (const std::string& map : maps) {
      if (std::find(failed.begin(), failed.end(), map) != failed.end()) continue;
      merged_maps += (merged_maps.empty() ? "" : ", ") + map;
    }
    std::string note;
    if (!merged_maps.empty()) note = " (the batch's other maps merged: " + merged_maps + ")";
    (void)RemoveTree(batch_dir);
    *failed_maps = std::move(failed);  // every other map of the batch is merged: only these wait
    return Status(first_failure.code(), first_failure.message() + note).WithContext(context);
  }
  *blame = Blame::kNode;  // every map committed: what is left is this node's bookkeeping
  FaultPoint("merge.after_commit");
  // The zip goes first and durably: once it is gone from staging/ the batch is done, and merging/ is mere scratch.
  // A storage node of a cluster keeps it in retained/ for peers that missed it (catch-up).
  if (RetainsMergedBatches(runtime_.config().cluster)) {
    PLANB_RETURN_IF_ERROR(RetainMergedBatch(runtime_.home(), zip_path, batch_id).WithContext(context));
  } else {
    PLANB_RETURN_IF_ERROR(DurableUnlink(zip_path).WithContext(context));
  }
  PLANB_RETURN_IF_ERROR(RemoveTree(batch_dir).WithContext(context));
  report->last_sequence = std::max(report->last_sequence, sequence);
  report->merged.insert(sequence);
  ++report->batches;
  return Status::Ok();
}

Status MergeProcessor::MergeMap(const std::string& map_dir, const std::string& map, const std::string& batch_id,
                                bool replace, MergeReport* report, Blame* blame) {
  *blame = Blame::kNode;
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(runtime_.catalog().Get(map, &plugins));
  const std::string shard_path = runtime_.home().ShardPath(plugins->config().name);
  if (HasDeleteEntry(map_dir)) return MergeDeletion(map_dir, plugins, batch_id, report, blame);

  // Opening the batch checks that its meta (type, scheme, layout) is what this node's config says. Read-only: the
  // file may have come over the network, and a forged one (a free list naming live pages) would corrupt whatever
  // a write transaction on it produced.
  *blame = Blame::kBatch;
  std::shared_ptr<MapEnv> batch;
  PLANB_RETURN_IF_ERROR(MapEnv::Open(map_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &batch));
  Txn batch_txn;
  PLANB_RETURN_IF_ERROR(batch_txn.Begin(batch->env(), MDB_RDONLY));
  *blame = Blame::kNode;  // the shard's side

  std::shared_ptr<MapEnv> shard;
  Status opened = runtime_.envs().Get(shard_path, plugins, &shard);
  // The first batch of a map: a fresh shard, built beside the batch and filled by the same merge as any later
  // batch, then moved into place (durably) once its rows and version committed. Should the process die before the
  // zip is unstaged, the next run merges the same rows into this shard, which changes nothing.
  std::string fresh;
  if (opened.code() == Code::kNotFound) {
    fresh = map_dir + ".shard";  // a map name has no '.': no map's directory
    PLANB_RETURN_IF_ERROR(RemoveTree(fresh));
    opened = MapEnv::Open(fresh, plugins, MapEnv::Mode::kCreate, MapEnv::kShardFlags, &shard);
  }
  PLANB_RETURN_IF_ERROR(opened);

  BatchMapMerge merged;
  Status s = MergeBatchMap(plugins, *batch, batch_txn.get(), *shard, shard_path, !fresh.empty(), batch_id, replace,
                           CurrentTimeMs(), &merged);
  *blame = merged.batch_at_fault ? Blame::kBatch : Blame::kNode;
  PLANB_RETURN_IF_ERROR(s);
  report->rows_merged[plugins->config().name] += merged.rows_read;
  if (merged.rows_shadowed > 0) report->rows_shadowed[plugins->config().name] += merged.rows_shadowed;
  if (!fresh.empty()) {
    shard.reset();  // closed before it moves: only this process knows it
    PLANB_RETURN_IF_ERROR(RemoveTree(shard_path));  // an empty directory left by a crash, at most
    PLANB_RETURN_IF_ERROR(DurableRename(fresh, shard_path));
  }
  return Status::Ok();
}

Status MergeProcessor::MergeDeletion(const std::string& map_dir, const std::shared_ptr<const MapPlugins>& plugins,
                                     const std::string& batch_id, MergeReport* report, Blame* blame) {
  *blame = Blame::kBatch;
  DeleteEntry entry;
  PLANB_RETURN_IF_ERROR(ReadDeleteEntry(map_dir, &entry));
  *blame = Blame::kNode;
  const std::string shard_path = runtime_.home().ShardPath(plugins->config().name);
  std::shared_ptr<MapEnv> shard;
  Status opened = runtime_.envs().Get(shard_path, plugins, &shard);
  // No shard: no rows to delete, but the tombstone must be kept, or an older batch merged after the deletion would
  // keep rows that a node which merged it first has deleted. A fresh shard records it, moved in as a first merge's.
  std::string fresh;
  if (opened.code() == Code::kNotFound) {
    fresh = map_dir + ".shard";
    PLANB_RETURN_IF_ERROR(RemoveTree(fresh));
    opened = MapEnv::Open(fresh, plugins, MapEnv::Mode::kCreate, MapEnv::kShardFlags, &shard);
  }
  PLANB_RETURN_IF_ERROR(opened.WithContext(shard_path));
  DeleteMergeResult deleted;
  Status s = DeleteFromShard(*plugins, *shard, entry, batch_id, CurrentTimeMs(), &deleted);
  if (deleted.batch_at_fault) *blame = Blame::kBatch;
  PLANB_RETURN_IF_ERROR(s.WithContext(shard_path));
  report->rows_deleted[plugins->config().name] += deleted.rows_deleted;
  if (!fresh.empty()) {
    shard.reset();
    PLANB_RETURN_IF_ERROR(RemoveTree(shard_path));
    PLANB_RETURN_IF_ERROR(DurableRename(fresh, shard_path));
  }
  return Status::Ok();
}

}  // namespace planb
