#include "host/serve/snapshot_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "host/common/file_hash.h"
#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/maintain/shard_rows_maintenance.h"
#include "host/storage/dense_copy.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"

namespace planb {

namespace fs = std::filesystem;

namespace {

Status ErrnoStatus(int err, const std::string& what) {
  return Status(err == ENOSPC ? Code::kFull : Code::kIOError, what + ": " + std::strerror(err));
}

// The content version in `env`, in a read transaction of its own.
Status ReadVersion(const MapEnv& env, ContentVersion* out) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(env.path()));
  return ReadContentVersion(txn.get(), env.meta(), out).WithContext(env.path());
}

// The share of `env`'s pages (up to the last used one) on its free list, as its last committed transaction left
// them: what a compacting copy would leave out. The free list is a few records, each a count and page numbers.
Status FreePageShare(const MapEnv& env, double* share) {
  MDB_envinfo info;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(env.env(), &info), "reading the size of " + env.path()));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(env.path()));
  MDB_cursor* cursor = nullptr;
  constexpr MDB_dbi kFreeDbi = 0;
  PLANB_RETURN_IF_ERROR(
      LmdbStatus(mdb_cursor_open(txn.get(), kFreeDbi, &cursor), "reading the free list of " + env.path()));
  uint64_t free_pages = 0;
  MDB_val key, value;
  int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    size_t count = 0;  // an ID list: its length, then the page numbers
    if (value.mv_size >= sizeof(count)) std::memcpy(&count, value.mv_data, sizeof(count));
    free_pages += count;
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading the free list of " + env.path());
  *share = static_cast<double>(free_pages) / static_cast<double>(info.me_last_pgno + 1);
  return Status::Ok();
}

// LMDB's copy (compacting or not) of `shard` into the new file `path`, under the copy's own read transaction.
Status CopyShard(const MapEnv& shard, const std::string& path, bool compact) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, HomeFileMode());
  if (fd < 0) return ErrnoStatus(errno, "creating " + path);
  const int rc = mdb_env_copyfd2(shard.env(), fd, compact ? MDB_CP_COMPACT : 0);
  const int close_errno = ::close(fd) != 0 ? errno : 0;
  if (rc == ENOSPC) return ErrnoStatus(rc, "copying " + shard.path() + " to " + path);
  PLANB_RETURN_IF_ERROR(LmdbStatus(rc, "copying " + shard.path() + " to " + path));
  if (close_errno != 0) return ErrnoStatus(close_errno, "closing " + path);
  return Status::Ok();
}

// Applies the map's retention and condensation to the snapshot copy in `copy_dir` (data.mdb, made by CopyShard
// from this node's own shard), so that readers download only what maintenance would keep; when rows went, the
// copy is copied again densely (deleted rows leave free pages and half-empty ones). The content version is not changed: snapshots of one
// version made at different times may differ by what aged out meanwhile.
// `dense_dir` is scratch for the second copy, outside the zip's directory.
Status TrimCopy(const std::string& copy_dir, const std::string& dense_dir,
                const std::shared_ptr<const MapPlugins>& plugins, int64_t now_ms) {
  bool asked = false;
  (void)RowsRequest(plugins->config(), now_ms, &asked);
  if (!asked) return Status::Ok();
  RowsMaintenance rows;
  {
    std::shared_ptr<MapEnv> copy;
    PLANB_RETURN_IF_ERROR(
        MapEnv::Open(copy_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kBatchFlags, &copy));
    PLANB_RETURN_IF_ERROR(MaintainShardRows(*copy, now_ms, false, nullptr, kMergedBatchesKeepMs, &rows));
    if (rows.stats.rows_deleted + rows.stats.rows_condensed == 0) return Status::Ok();
    PLANB_RETURN_IF_ERROR(RemoveTree(dense_dir));
    PLANB_RETURN_IF_ERROR(MakeDirectories(dense_dir));
    DenseCopyStats stats;
    PLANB_RETURN_IF_ERROR(DenseCopy(copy->env(), dense_dir, &stats));
  }  // the copy's environment closes here, before its file is replaced
  if (::rename((dense_dir + "/data.mdb").c_str(), (copy_dir + "/data.mdb").c_str()) != 0) {
    return ErrnoStatus(errno, "replacing " + copy_dir + "/data.mdb");
  }
  (void)::unlink((copy_dir + "/lock.mdb").c_str());
  return RemoveTree(dense_dir);
}


}  // namespace

Status SnapshotSource::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  latest_.clear();
  retired_.clear();
  const std::string outgoing = runtime_.home().outgoing();
  PLANB_RETURN_IF_ERROR(MakeDirectories(outgoing));
  std::error_code ec;
  std::vector<std::string> entries;
  for (const fs::directory_entry& entry : fs::directory_iterator(outgoing, ec)) entries.push_back(entry.path());
  if (ec) return Status::IOError("listing " + outgoing + ": " + ec.message());
  for (const std::string& path : entries) PLANB_RETURN_IF_ERROR(RemoveTree(path));
  return Status::Ok();
}

Status SnapshotSource::Prepare(const std::string& map, const ContentVersion& have, PreparedSnapshot* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  *out = PreparedSnapshot();
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(runtime_.catalog().Get(map, &plugins));  // kNotFound naming the map
  const std::string name = plugins->config().name;
  std::shared_ptr<MapEnv> shard;
  Status opened = runtime_.OpenShard(name, &shard);
  if (opened.code() == Code::kNotFound) return Status::NotFound("nothing merged into " + name + " on this node yet");
  PLANB_RETURN_IF_ERROR(opened);

  // The shard's version costs one read transaction; only a version other than the requester's costs a copy.
  ContentVersion current;
  PLANB_RETURN_IF_ERROR(ReadVersion(*shard, &current));
  out->map = name;
  if (current == have) {
    out->not_modified = true;
    out->version = current;
    return Status::Ok();
  }
  auto latest = latest_.find(name);
  std::error_code ec;
  if (latest != latest_.end() && latest->second.version == current && fs::exists(latest->second.zip_path, ec)) {
    *out = latest->second;
    return Status::Ok();
  }
  PreparedSnapshot made;
  made.map = name;
  PLANB_RETURN_IF_ERROR(MakeZip(name, plugins, shard, &made).WithContext("snapshot of " + name));
  if (made.version == have) {
    // Merges went on between the look at the shard and the copy, up to the requester's version (it holds a
    // snapshot from a node that was ahead of this one).
    (void)RemoveTree(made.zip_path);
    out->not_modified = true;
    out->version = made.version;
    return Status::Ok();
  }
  if (latest != latest_.end()) {
    // Readers fetching a replaced zip hold it open, so unlinking only frees its name (and its space once closed).
    // The one replaced now is unlinked only at the next replacement: an offer of it may still be on its way from
    // this worker to the receiver, which opens the file when it takes the offer.
    std::string& retired = retired_[name];
    if (!retired.empty()) (void)RemoveTree(retired);
    retired = latest->second.zip_path;
  }
  latest_[name] = made;
  *out = made;
  return Status::Ok();
}

Status SnapshotSource::MakeZip(const std::string& map, const std::shared_ptr<const MapPlugins>& plugins,
                               const std::shared_ptr<MapEnv>& shard, PreparedSnapshot* out) {
  const int64_t now = CurrentTimeMs();
  const std::string outgoing = runtime_.home().outgoing();
  const std::string stem = map + "-" + std::to_string(now) + "-" + std::to_string(++made_);
  // The copy sits in a directory of its own, laid out as a batch (<map>/data.mdb), which ZipBatch zips as it is.
  const std::string scratch = outgoing + "/." + stem;
  const std::string copy_dir = scratch + "/" + map;
  Status status = MakeDirectories(copy_dir);
  double free_share = 0;
  if (status.ok() && making_.compact_above_free_share > 0) status = FreePageShare(*shard, &free_share);
  if (status.ok()) {
    status = CopyShard(*shard, copy_dir + "/data.mdb", free_share >= making_.compact_above_free_share);
  }
  if (status.ok()) {
    // The version read from the copy: merges that committed after the copy's read transaction began are not in
    // it, and neither is their batch in the version.
    std::shared_ptr<MapEnv> copy;
    status = MapEnv::Open(copy_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &copy);
    if (status.ok()) status = ReadVersion(*copy, &out->version);
  }
  if (status.ok()) status = TrimCopy(copy_dir, scratch + ".dense", plugins, now);
  const std::string zip_path = outgoing + "/" + stem + ".zip";
  if (status.ok()) {
    ZipOptions options;
    options.compress = making_.deflate;
    options.durable = false;  // outgoing/ is a cache that Clear() empties at every start
    options.batch_id =
        "snapshot/" + runtime_.config().cluster.node_name + "/" + map + "/" + std::to_string(out->version.batches);
    status = ZipBatch(scratch, zip_path, options);
  }
  (void)RemoveTree(scratch);
  (void)RemoveTree(scratch + ".dense");
  if (status.ok()) status = HashFile(zip_path, &out->size, &out->checksum);
  if (!status.ok()) {
    (void)RemoveTree(zip_path);
    return status;
  }
  out->zip_path = zip_path;
  out->create_time_ms = now;
  return Status::Ok();
}

}  // namespace planb
