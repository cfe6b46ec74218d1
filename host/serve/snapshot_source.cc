#include "host/serve/snapshot_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>
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

// Streamed copies tried before copying into a file: merges committing during each of them force the next.
constexpr int kStreamAttempts = 2;

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

// The batch id a snapshot zip's manifest gives: node, map and how many batches the copy holds.
std::string SnapshotBatchId(const std::string& node, const std::string& map, const ContentVersion& version) {
  return "snapshot/" + node + "/" + map + "/" + std::to_string(version.batches);
}

// Streams LMDB's copy of `shard` (compacting or not) into the zip `zip_path` through a pipe: a thread of its own
// runs the copy into the pipe while libzip reads the other end, so the shard's bytes are written once, into the
// zip, instead of into a scratch file first. The copy's version cannot be read from the copy (it is never a
// file), so it is read before, with the last committed transaction's id, in one read transaction; when that id is
// still the last one after the copy, no merge committed in between and the copy holds exactly that version:
// `*consistent`. Otherwise the zip is removed and `*consistent` is false (merges went on: the caller tries again
// or copies into a file, whose version it can read). `options` gets the batch id here.
Status StreamShardZip(const MapEnv& shard, const std::string& map, const std::string& node, bool compact,
                      const std::function<void()>& after_copy, ZipOptions options, const std::string& zip_path,
                      ContentVersion* version, bool* consistent) {
  *consistent = false;
  size_t txn_id = 0;
  {
    Txn txn;
    PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), MDB_RDONLY).WithContext(shard.path()));
    txn_id = mdb_txn_id(txn.get());
    PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), shard.meta(), version).WithContext(shard.path()));
  }
  options.batch_id = SnapshotBatchId(node, map, *version);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "making a pipe for the copy of " + shard.path());
  // A larger pipe means fewer hand-overs between the two threads; the default (64 KiB) still works.
  (void)::fcntl(pipe_fds[1], F_SETPIPE_SZ, 1 << 20);
  int copy_rc = MDB_SUCCESS;
  std::thread copier([&] {
    copy_rc = mdb_env_copyfd2(shard.env(), pipe_fds[1], compact ? MDB_CP_COMPACT : 0);
    ::close(pipe_fds[1]);  // the end of the stream: libzip's source reads to it
  });
  Status zipped = ZipMapStream(map, pipe_fds[0], zip_path, options);  // reads the pipe to its end, errors too
  copier.join();
  ::close(pipe_fds[0]);
  if (zipped.ok() && copy_rc != MDB_SUCCESS) {
    zipped = copy_rc == ENOSPC ? ErrnoStatus(copy_rc, "copying " + shard.path())
                               : LmdbStatus(copy_rc, "copying " + shard.path());
  }
  if (zipped.ok() && after_copy) after_copy();
  MDB_envinfo info;
  if (zipped.ok()) zipped = LmdbStatus(mdb_env_info(shard.env(), &info), "reading the state of " + shard.path());
  if (zipped.ok()) *consistent = info.me_last_txnid == txn_id;
  if (!zipped.ok() || !*consistent) (void)RemoveTree(zip_path);
  return zipped;
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
  const std::string zip_path = outgoing + "/" + stem + ".zip";
  const std::string& node = runtime_.config().cluster.node_name;
  ZipOptions options;
  options.compress = making_.deflate;
  options.durable = false;  // outgoing/ is a cache that Clear() empties at every start
  double free_share = 0;
  if (making_.compact_above_free_share > 0) PLANB_RETURN_IF_ERROR(FreePageShare(*shard, &free_share));
  const bool compact = free_share >= making_.compact_above_free_share;

  // Streamed unless retention or condensation may trim the copy (that needs the copy as a file of its own), and
  // tried again once when merges committed during the copy.
  bool trims = false;
  (void)RowsRequest(plugins->config(), now, &trims);
  bool made = false;
  for (int attempt = 0; attempt < kStreamAttempts && !trims && !made; ++attempt) {
    PLANB_RETURN_IF_ERROR(StreamShardZip(*shard, map, node, compact, making_.after_streamed_copy, options, zip_path,
                                         &out->version, &made));
  }
  Status status;
  if (!made) {
    // The copy sits in a directory of its own, laid out as a batch (<map>/data.mdb), which ZipBatch zips as it is.
    const std::string scratch = outgoing + "/." + stem;
    const std::string copy_dir = scratch + "/" + map;
    status = MakeDirectories(copy_dir);
    if (status.ok()) status = CopyShard(*shard, copy_dir + "/data.mdb", compact);
    if (status.ok()) {
      // The version read from the copy: merges that committed after the copy's read transaction began are not in
      // it, and neither is their batch in the version.
      std::shared_ptr<MapEnv> copy;
      status = MapEnv::Open(copy_dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &copy);
      if (status.ok()) status = ReadVersion(*copy, &out->version);
    }
    if (status.ok()) status = TrimCopy(copy_dir, scratch + ".dense", plugins, now);
    if (status.ok()) {
      options.batch_id = SnapshotBatchId(node, map, out->version);
      status = ZipBatch(scratch, zip_path, options);
    }
    (void)RemoveTree(scratch);
    (void)RemoveTree(scratch + ".dense");
  }
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
