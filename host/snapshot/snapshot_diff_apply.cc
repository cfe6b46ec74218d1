#include "host/snapshot/snapshot_diff_apply.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "host/common/file_copy.h"
#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/ingest/batch_verifier.h"
#include "host/ingest/delete_merge.h"
#include "host/ingest/merge_batch_map.h"
#include "host/snapshot/unsynced_snapshot.h"
#include "host/storage/map_env.h"
#include "host/transfer/batch_zip.h"
#include "host/transfer/delete_entry.h"
#include "host/transfer/snapshot_diff_file.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

Status ReadVersion(const MapEnv& env, ContentVersion* out) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(env.path()));
  return ReadContentVersion(txn.get(), env.meta(), out).WithContext(env.path());
}

// Merges one verified part, extracted at `part_dir`, into `copy` as the node merged it.
Status MergePart(const std::shared_ptr<const MapPlugins>& plugins, const std::string& part_dir, const MapEnv& copy,
                 const std::string& batch_id, bool replace, AppliedDiff* out) {
  const std::string map_dir = part_dir + "/" + plugins->config().name;
  const int64_t now = CurrentTimeMs();
  if (HasDeleteEntry(map_dir)) {
    DeleteEntry entry;
    PLANB_RETURN_IF_ERROR(ReadDeleteEntry(map_dir, &entry));
    DeleteMergeResult deleted;
    return DeleteFromShard(*plugins, copy, entry, batch_id, now, &deleted).WithContext(copy.path());
  }
  std::shared_ptr<MapEnv> batch;
  PLANB_RETURN_IF_ERROR(MapEnv::Open(map_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &batch));
  Txn batch_txn;
  PLANB_RETURN_IF_ERROR(batch_txn.Begin(batch->env(), MDB_RDONLY).WithContext(map_dir));
  BatchMapMerge merged;
  PLANB_RETURN_IF_ERROR(
      MergeBatchMap(plugins, *batch, batch_txn.get(), copy, copy.path(), false, batch_id, replace, now, &merged));
  out->rows_read += merged.rows_read;
  return Status::Ok();
}

}  // namespace

Status ApplySnapshotDiff(const MapCatalog& catalog, const std::shared_ptr<const MapPlugins>& plugins,
                         const std::string& diff_path, const std::string& held_dir, const ContentVersion& held,
                         const ContentVersion& offered, const std::string& scratch_dir, AppliedDiff* out) {
  *out = AppliedDiff();
  const std::string& map = plugins->config().name;
  const std::string parts_dir = scratch_dir + "/parts";
  PLANB_RETURN_IF_ERROR(MakeDirectories(parts_dir));
  DiffHead head;
  std::vector<std::string> parts;
  // A diff is never larger than the shard it brings up to date.
  PLANB_RETURN_IF_ERROR(ReadDiffFile(diff_path, parts_dir, plugins->config().max_store_size, &head, &parts));
  if (head.map != map) return Status::Invalid(diff_path + ": a diff of map " + head.map + ", not of " + map);
  if (head.from != held) {
    return Status::Invalid(diff_path + ": a diff from content version " + head.from.ToString() +
                           ", but the snapshot held is at " + held.ToString());
  }
  if (head.to != offered) {
    return Status::Invalid(diff_path + ": a diff to content version " + head.to.ToString() + ", but the offer said " +
                           offered.ToString());
  }
  UnzipLimits limits;
  limits.max_total_bytes = plugins->config().max_store_size;
  limits.allow_deletes = true;
  limits.sync = false;  // scratch: a crash loses nothing the diff cannot give again
  std::vector<bool> replaces;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string where = diff_path + ": part " + std::to_string(i + 1) + " of " + std::to_string(parts.size());
    // Verified in a child process as an upload is, then extracted to be merged.
    PLANB_RETURN_IF_ERROR(VerifyBatch(catalog, parts[i], parts[i] + ".verify", limits).WithContext(where));
    std::vector<std::string> maps;
    std::string batch_id;
    bool replace = false;
    PLANB_RETURN_IF_ERROR(
        UnzipBatch(parts[i], parts_dir + "/" + std::to_string(i), limits, &maps, &batch_id, &replace).WithContext(where));
    if (maps.size() != 1 || maps[0] != map) {
      return Status::Invalid(where + ": holds " + std::to_string(maps.size()) + " map(s), not only " + map);
    }
    if (batch_id != head.batch_ids[i]) {
      return Status::Invalid(where + ": holds batch '" + batch_id + "', the head names '" + head.batch_ids[i] + "'");
    }
    replaces.push_back(replace);
  }
  const std::string copy_dir = scratch_dir + "/" + map;
  PLANB_RETURN_IF_ERROR(MakeDirectories(copy_dir));
  PLANB_RETURN_IF_ERROR(CopyFileTo(held_dir + "/data.mdb", copy_dir + "/data.mdb"));
  {
    std::shared_ptr<MapEnv> copy;
    // Scratch until it is renamed into place: no sync per merged part (and none at the end, see below).
    PLANB_RETURN_IF_ERROR(
        MapEnv::Open(copy_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags | MDB_NOSYNC, &copy));
    ContentVersion version;
    PLANB_RETURN_IF_ERROR(ReadVersion(*copy, &version));
    if (version != held) {
      return Status::Internal(copy_dir + ": the copy of the snapshot held is at content version " +
                              version.ToString() + ", not " + held.ToString());
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      PLANB_RETURN_IF_ERROR(MergePart(plugins, parts_dir + "/" + std::to_string(i), *copy, head.batch_ids[i],
                                      replaces[i], out)
                                .WithContext(diff_path + ": merging part " + std::to_string(i + 1) + " (batch '" +
                                             head.batch_ids[i] + "')"));
      ++out->batches;
    }
    PLANB_RETURN_IF_ERROR(ReadVersion(*copy, &version));
    if (version != offered) {
      return Status::Corruption(diff_path + ": merging its " + std::to_string(parts.size()) +
                                " batches gives content version " + version.ToString() + ", not the " +
                                offered.ToString() + " offered");
    }
  }
  // Not synced: marked with this boot instead (unsynced_snapshot.h), unless the boot is unknown.
  bool marked = false;
  PLANB_RETURN_IF_ERROR(MarkUnsyncedSnapshot(copy_dir, &marked));
  if (!marked) PLANB_RETURN_IF_ERROR(SyncPath(copy_dir + "/data.mdb"));
  // A snapshot directory holds data.mdb alone: readers open it without a lock file.
  if (::unlink((copy_dir + "/lock.mdb").c_str()) != 0 && errno != ENOENT) {
    return Status::IOError("removing " + copy_dir + "/lock.mdb: " + std::strerror(errno));
  }
  return RemoveTree(parts_dir);
}

}  // namespace planb
