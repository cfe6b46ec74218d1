#include "host/ingest/replace_merge.h"

#include "host/common/file_util.h"
#include "host/ingest/tombstones.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_compaction.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

// The fresh shard at `path` gets the old shard's merged-batch records and content version, read in `old_txn`.
Status CarryRecord(const MapEnv& old_shard, MDB_txn* old_txn, MDB_dbi old_batches, const MapEnv& fresh) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(fresh.env(), 0));
  MDB_dbi batches = 0;
  PLANB_RETURN_IF_ERROR(fresh.OpenBatchesTable(txn.get(), &batches));
  PLANB_RETURN_IF_ERROR(
      CarryMergedBatches(old_txn, old_shard.meta(), old_batches, txn.get(), fresh.meta(), batches));
  // The deletions merged before keep shadowing: the replacement's own rows older than one of them go too (its
  // merge applies them), as they would had the replacement come first.
  MDB_dbi old_tombstones = 0;
  bool found = false;
  PLANB_RETURN_IF_ERROR(OpenTombstones(old_txn, /*create=*/false, &old_tombstones, &found));
  if (found) {
    MDB_dbi tombstones = 0;
    PLANB_RETURN_IF_ERROR(OpenTombstones(txn.get(), /*create=*/true, &tombstones, &found));
    PLANB_RETURN_IF_ERROR(CarryTombstones(old_txn, old_tombstones, txn.get(), tombstones));
  }
  return txn.Commit();
}

}  // namespace

Status ReplaceShard(const Home& home, EnvCache& envs, const std::shared_ptr<const MapPlugins>& plugins,
                    std::shared_ptr<MapEnv> shard, const MapEnv& batch, MDB_txn* batch_txn,
                    const std::string& batch_id, int64_t now_ms, MapMergeResult* result) {
  (void)envs;  // the cache reopens the shard by itself at its next Get (MapEnv::Replaced)
  result->batch_at_fault = false;
  result->already_merged = false;
  const std::string& map = plugins->config().name;
  const std::string shard_path = home.ShardPath(map);
  // A write transaction of the old shard: the merge thread may open its "batches" table here (merges take turns),
  // and nothing else writes it until the exchange.
  Txn old_txn;
  PLANB_RETURN_IF_ERROR(old_txn.Begin(shard->env(), 0).WithContext(shard_path));
  MDB_dbi old_batches = 0;
  PLANB_RETURN_IF_ERROR(shard->OpenBatchesTable(old_txn.get(), &old_batches));
  PLANB_RETURN_IF_ERROR(IsBatchRecorded(old_txn.get(), old_batches, batch_id, &result->already_merged)
                            .WithContext(shard_path));
  if (result->already_merged) return Status::Ok();

  const std::string copy_path = CompactionPath(home, map);
  PLANB_RETURN_IF_ERROR(RemoveTree(copy_path));  // a leftover of a crash, at most
  Status s;
  {
    std::shared_ptr<MapEnv> fresh;
    s = MapEnv::Open(copy_path, plugins, MapEnv::Mode::kCreate, MapEnv::kShardFlags, &fresh);
    if (s.ok()) s = CarryRecord(*shard, old_txn.get(), old_batches, *fresh).WithContext(copy_path);
    old_txn.Abort();
    if (s.ok()) s = MergeIntoShard(*plugins, batch, batch_txn, *fresh, batch_id, now_ms, result);
  }  // the fresh environment is closed before it moves: only this process knows it
  if (!s.ok()) {
    (void)RemoveTree(copy_path);
    return s;
  }
  // The commit synced data.mdb; its directory entry too, before the old shard can be deleted.
  PLANB_RETURN_IF_ERROR(SyncPath(copy_path));
  shard.reset();
  return SwapShardIn(home, copy_path, shard_path, "replace.before_exchange", "replace.after_exchange");
}

}  // namespace planb
