#include "host/ingest/merge_processor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "host/common/file_util.h"
#include "host/ingest/staging_store.h"
#include "planb/lmdb.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr const char* kMergedSuffix = ".merged";

// Deletes what a crash left of batches already merged (see MergeBatch).
Status RemoveMergedLeftovers(const std::string& merging) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(merging, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > std::strlen(kMergedSuffix) &&
        name.compare(name.size() - std::strlen(kMergedSuffix), std::string::npos, kMergedSuffix) == 0) {
      PLANB_RETURN_IF_ERROR(RemoveTree(entry.path().string()));
    }
  }
  if (ec) return Status::IOError("listing " + merging + ": " + ec.message());
  return Status::Ok();
}
}  // namespace

Status MergeProcessor::MergePending(MergeReport* report) {
  const Home& home = runtime_.home();
  FileLock lock;
  PLANB_RETURN_IF_ERROR(lock.Acquire(home.merging() + "/.lock"));
  PLANB_RETURN_IF_ERROR(RemoveMergedLeftovers(home.merging()));
  // A batch in merging/ was interrupted mid-merge: it is older than anything still in staging/.
  std::vector<StagedBatch> batches;
  PLANB_RETURN_IF_ERROR(StagingStore::List(home.merging(), &batches));
  for (const StagedBatch& batch : batches) PLANB_RETURN_IF_ERROR(MergeBatch(batch.path, report));
  PLANB_RETURN_IF_ERROR(StagingStore::List(home.staging(), &batches));
  for (const StagedBatch& batch : batches) {
    std::string target = home.merging() + "/" + StagingStore::BatchName(batch.sequence);
    PLANB_RETURN_IF_ERROR(DurableRename(batch.path, target));
    PLANB_RETURN_IF_ERROR(MergeBatch(target, report));
  }
  return Status::Ok();
}

Status MergeProcessor::MergeBatch(const std::string& batch_dir, MergeReport* report) {
  std::vector<std::string> maps;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(batch_dir, ec)) {
    if (entry.is_directory(ec)) maps.push_back(entry.path().filename().string());
  }
  if (ec) return Status::IOError("listing batch " + batch_dir + ": " + ec.message());
  std::sort(maps.begin(), maps.end());
  // A map missing from the config or a shard that cannot be opened stops the batch before any of its maps is
  // merged; the batch stays queued (nothing is lost) until the config or the shard is repaired.
  for (const std::string& map : maps) {
    std::shared_ptr<const MapPlugins> plugins;
    PLANB_RETURN_IF_ERROR(runtime_.catalog().Get(map, &plugins).WithContext("merging batch " + batch_dir));
    std::shared_ptr<MapEnv> shard;
    Status s = runtime_.OpenShard(map, &shard);
    if (!s.ok() && s.code() != Code::kNotFound) return s.WithContext("merging batch " + batch_dir);
  }
  for (const std::string& map : maps) {
    PLANB_RETURN_IF_ERROR(MergeMap(batch_dir + "/" + map, map, report).WithContext("merging batch " + batch_dir));
  }
  // Renamed first, atomically: a crash during the (non-atomic) delete then leaves a ".merged" directory that no
  // longer looks like a batch, rather than half a batch that every later run would fail on.
  const std::string merged = batch_dir + kMergedSuffix;
  PLANB_RETURN_IF_ERROR(DurableRename(batch_dir, merged));
  PLANB_RETURN_IF_ERROR(RemoveTree(merged));
  ++report->batches;
  return Status::Ok();
}

Status MergeProcessor::MergeMap(const std::string& map_dir, const std::string& map, MergeReport* report) {
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(runtime_.catalog().Get(map, &plugins));
  const std::string shard_path = runtime_.home().ShardPath(plugins->config().name);

  // Opening the batch checks that its meta (type, scheme, layout) is what this node's config says.
  std::shared_ptr<MapEnv> batch;
  PLANB_RETURN_IF_ERROR(MapEnv::Open(map_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &batch));
  Txn batch_txn;
  PLANB_RETURN_IF_ERROR(batch_txn.Begin(batch->env(), MDB_RDONLY));
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_stat(batch_txn.get(), batch->data(), &stat), "counting batch rows"));

  std::shared_ptr<MapEnv> shard;
  Status opened = runtime_.envs().Get(shard_path, plugins, &shard);
  if (opened.code() == Code::kNotFound) {
    // The first batch of a map becomes its shard as it is.
    batch_txn.Abort();
    batch.reset();
    PLANB_RETURN_IF_ERROR(RemoveTree(shard_path));  // an empty directory left by a crash, at most
    PLANB_RETURN_IF_ERROR(DurableRename(map_dir, shard_path));
    report->rows_merged[plugins->config().name] += stat.ms_entries;
    return Status::Ok();
  }
  PLANB_RETURN_IF_ERROR(opened);

  Cursor batch_cursor;
  PLANB_RETURN_IF_ERROR(batch_cursor.Open(batch_txn.get(), batch->data()));
  Txn shard_txn;
  PLANB_RETURN_IF_ERROR(shard_txn.Begin(shard->env(), 0).WithContext(shard_path));
  Cursor shard_cursor;
  PLANB_RETURN_IF_ERROR(shard_cursor.Open(shard_txn.get(), shard->data()));
  MergeStats stats;
  ErrorBuffer error;
  Code code = plugins->store()->Merge(batch->MakeTable(batch_txn.get(), batch_cursor.get()),
                                      shard->MakeTable(shard_txn.get(), shard_cursor.get()), &stats, &error);
  shard_cursor.Close();
  if (code != Code::kOk) {
    Status failed = Status::FromPlugin(code, error);
    if (code == Code::kFull) {
      failed = Status(code, failed.message() + " (max_store_size is " +
                                std::to_string(plugins->config().max_store_size) + " bytes; raise it in [map." +
                                plugins->config().name + "])");
    }
    return failed.WithContext(shard_path);  // the write transaction aborts: the shard is as it was
  }
  PLANB_RETURN_IF_ERROR(shard_txn.Commit().WithContext(shard_path));
  report->rows_merged[plugins->config().name] += stats.rows_read;
  return Status::Ok();
}

}  // namespace planb
