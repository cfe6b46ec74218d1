#include "host/serve/snapshot_diff_source.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <functional>
#include <queue>
#include <utility>

#include "host/catchup/batch_retention.h"
#include "host/common/fault_point.h"
#include "host/common/file_hash.h"
#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/maintain/maintenance_marks.h"
#include "host/maintain/shard_rows_maintenance.h"
#include "host/transfer/batch_zip.h"
#include "host/transfer/snapshot_diff_file.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

std::string MarkText(const std::optional<int64_t>& ms) {
  return ms ? std::to_string(*ms) + " ms" : std::string("never");
}

// The bytes a whole snapshot of `shard` would send about: its pages up to the last used one.
Status ShardBytes(const MapEnv& shard, uint64_t* bytes) {
  MDB_envinfo info;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(shard.env(), &info), "reading the size of " + shard.path()));
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_stat(shard.env(), &stat), "reading the page size of " + shard.path()));
  *bytes = (uint64_t{info.me_last_pgno} + 1) * stat.ms_psize;
  return Status::Ok();
}

// Flips the file's last byte (inside its last part's zip directory).
Status FlipLastByte(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening " + path);
  struct stat st;
  unsigned char byte = 0;
  bool ok = ::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &byte, 1, st.st_size - 1) == 1;
  byte ^= 0x5a;
  ok = ok && ::pwrite(fd, &byte, 1, st.st_size - 1) == 1;
  ::close(fd);
  return ok ? Status::Ok() : Status::IOError("corrupting " + path);
}

}  // namespace

Status BatchesMergedSince(MDB_txn* txn, const MapEnv& shard, const ContentVersion& have, std::vector<std::string>* ids,
                          bool* found, std::string* why) {
  ids->clear();
  *found = false;
  ContentVersion now;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn, shard.meta(), &now).WithContext(shard.path()));
  if (have.batches >= now.batches) {
    *why = "the snapshot held (content version " + have.ToString() + ") is not behind this node's shard (" +
           now.ToString() + ")";
    return Status::Ok();
  }
  const uint64_t need = now.batches - have.batches;
  if (need > kMaxDiffBatches) {
    *why = "the snapshot held is " + std::to_string(need) + " batches behind, more than a diff carries (" +
           std::to_string(kMaxDiffBatches) + ")";
    return Status::Ok();
  }
  if (shard.batches() == 0) {
    *why = "the shard has no records of the batches it merged";
    return Status::Ok();
  }
  // The `need` newest records by (merge time, id): a min-heap whose top is the oldest kept.
  using Record = std::pair<int64_t, std::string>;
  std::priority_queue<Record, std::vector<Record>, std::greater<Record>> newest;
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, shard.batches()).WithContext(shard.path()));
  MDB_val key, value;
  int rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
    if (value.mv_size != 8) {
      *why = "a merge record of the shard is not a time";
      return Status::Ok();
    }
    Record record{static_cast<int64_t>(GetU64(static_cast<const uint8_t*>(value.mv_data))),
                  std::string(Bytes(key).view())};
    if (newest.size() < need) {
      newest.push(std::move(record));
    } else if (newest.top() < record) {
      newest.pop();
      newest.push(std::move(record));
    }
  }
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading table 'batches'").WithContext(shard.path());
  if (newest.size() < need) {
    *why = "the shard records " + std::to_string(newest.size()) + " batches, fewer than the " + std::to_string(need) +
           " merged since the snapshot held";
    return Status::Ok();
  }
  ContentVersion walked = now;
  for (; !newest.empty(); newest.pop()) {
    const std::string& id = newest.top().second;
    walked.batches -= 1;
    walked.digest ^= XXH3_64bits(id.data(), id.size());
    ids->push_back(id);
  }
  if (walked != have) {
    ids->clear();
    *why = "the snapshot held (content version " + have.ToString() + ") is not a point of this shard's history: "
           "taking out its " + std::to_string(need) + " newest batches gives " + walked.ToString();
    return Status::Ok();
  }
  *found = true;
  return Status::Ok();
}

Status SnapshotDiffSource::Prepare(const std::string& map, const SnapshotSince& since, PreparedSnapshot* out,
                                   std::string* why_whole) {
  std::lock_guard<std::mutex> lock(mutex_);
  *out = PreparedSnapshot();
  why_whole->clear();
  std::shared_ptr<const MapPlugins> plugins;
  Status known = runtime_.catalog().Get(map, &plugins);
  if (!known.ok()) {
    *why_whole = known.message();
    return Status::Ok();
  }
  const std::string name = plugins->config().name;
  if (!RetainsMergedBatches(runtime_.config().cluster)) {
    *why_whole = "this node keeps no merged batches (batch_retention)";
    return Status::Ok();
  }
  bool trimmed = false;
  (void)RowsRequest(plugins->config(), CurrentTimeMs(), &trimmed);
  if (trimmed) {
    *why_whole = "retention or condensation of " + name + " trims every snapshot copy";
    return Status::Ok();
  }
  if (since.have.empty()) {
    *why_whole = "the requester holds no snapshot";
    return Status::Ok();
  }
  std::shared_ptr<MapEnv> shard;
  Status opened = runtime_.OpenShard(name, &shard);
  if (opened.code() == Code::kNotFound) {
    *why_whole = "nothing merged into " + name + " on this node yet";
    return Status::Ok();
  }
  PLANB_RETURN_IF_ERROR(opened);
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
  ContentVersion now;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), shard->meta(), &now).WithContext(shard->path()));
  if (now == since.have) return Status::Ok();  // not modified: the caller says so
  MaintenanceMarks marks;
  PLANB_RETURN_IF_ERROR(ReadMaintenanceMarks(txn.get(), shard->meta(), &marks).WithContext(shard->path()));
  if (marks.last_condensed_ms != since.last_condensed_ms) {
    *why_whole = "maintenance condensed the shard (last " + MarkText(marks.last_condensed_ms) +
                 "), the snapshot held was condensed " + MarkText(since.last_condensed_ms);
    return Status::Ok();
  }
  auto latest = latest_.find(name);
  struct stat st;
  if (latest != latest_.end() && latest->second.since.have == since.have &&
      latest->second.since.last_condensed_ms == since.last_condensed_ms && latest->second.prepared.version == now &&
      ::lstat(latest->second.prepared.zip_path.c_str(), &st) == 0) {
    *out = latest->second.prepared;
    return Status::Ok();
  }
  std::vector<std::string> ids;
  bool found = false;
  PLANB_RETURN_IF_ERROR(BatchesMergedSince(txn.get(), *shard, since.have, &ids, &found, why_whole));
  if (!found) return Status::Ok();
  uint64_t shard_bytes = 0;
  PLANB_RETURN_IF_ERROR(ShardBytes(*shard, &shard_bytes));
  txn.Abort();  // the retained zips named are never rewritten: the diff needs nothing more of the shard
  PreparedSnapshot made;
  PLANB_RETURN_IF_ERROR(MakeDiff(name, since, now, ids, &made, why_whole).WithContext("snapshot diff of " + name));
  if (!made.diff) return Status::Ok();
  if (made.size >= shard_bytes) {
    (void)RemoveTree(made.zip_path);
    *why_whole = "the diff (" + std::to_string(made.size) + " bytes) is no smaller than the shard (" +
                 std::to_string(shard_bytes) + " bytes)";
    return Status::Ok();
  }
  if (latest != latest_.end()) {
    // As SnapshotSource does: the one replaced now goes at the next replacement (an offer of it may be on its way).
    std::string& retired = retired_[name];
    if (!retired.empty()) (void)RemoveTree(retired);
    retired = latest->second.prepared.zip_path;
  }
  latest_[name] = MadeDiff{since, made};
  *out = made;
  return Status::Ok();
}

Status SnapshotDiffSource::MakeDiff(const std::string& map, const SnapshotSince& since, const ContentVersion& to,
                                    const std::vector<std::string>& ids, PreparedSnapshot* out,
                                    std::string* why_whole) {
  const int64_t now_ms = CurrentTimeMs();
  const std::string outgoing = runtime_.home().outgoing();
  const std::string stem = map + "-diff-" + std::to_string(now_ms) + "-" + std::to_string(++made_);
  const std::string scratch = outgoing + "/." + stem;
  PLANB_RETURN_IF_ERROR(RemoveTree(scratch));
  PLANB_RETURN_IF_ERROR(MakeDirectories(scratch));
  UnzipLimits limits;
  limits.allow_deletes = true;
  limits.sync = false;  // scratch
  std::vector<std::string> parts;
  auto give_up = [&](const std::string& why) {
    *why_whole = why;
    return RemoveTree(scratch);
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& id = ids[i];
    const std::string retained = RetainedBatchPath(runtime_.home(), id);
    struct stat st;
    if (::lstat(retained.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return give_up("batch " + LogValue(id) + " is no longer retained on this node (batch_retention)");
    }
    std::string batch_id;
    std::vector<std::string> maps;
    Status read = ReadBatchId(retained, limits, &batch_id, &maps);
    if (!read.ok()) return give_up("retained batch " + LogValue(id) + ": " + read.message());
    if (batch_id != id) return give_up(retained + " holds batch " + LogValue(batch_id) + ", not " + LogValue(id));
    if (maps.size() == 1 && maps[0] == map) {
      parts.push_back(retained);  // the batch is this map's alone: sent as it was received
      continue;
    }
    // Only this map's part goes to the reader: its `snapshot` right may not cover the batch's other maps.
    const std::string all = scratch + "/" + std::to_string(i) + "-all";
    const std::string one = scratch + "/" + std::to_string(i);
    bool replace = false;
    Status unzipped = UnzipBatch(retained, all, limits, &maps, &batch_id, &replace);
    if (unzipped.code() == Code::kIOError || unzipped.code() == Code::kFull) return unzipped;
    if (!unzipped.ok()) return give_up("retained batch " + LogValue(id) + ": " + unzipped.message());
    if (std::find(maps.begin(), maps.end(), map) == maps.end()) {
      return give_up("retained batch " + LogValue(id) + " holds no part of " + map);
    }
    PLANB_RETURN_IF_ERROR(MakeDirectories(one));
    PLANB_RETURN_IF_ERROR(DurableRename(all + "/" + map, one + "/" + map));
    ZipOptions options;
    options.batch_id = id;
    options.replace = replace;
    options.durable = false;
    const std::string part = scratch + "/" + std::to_string(i) + ".zip";
    PLANB_RETURN_IF_ERROR(ZipBatch(one, part, options));
    PLANB_RETURN_IF_ERROR(RemoveTree(all));
    PLANB_RETURN_IF_ERROR(RemoveTree(one));
    parts.push_back(part);
  }
  DiffHead head;
  head.map = map;
  head.from = since.have;
  head.to = to;
  head.batch_ids = ids;
  const std::string path = outgoing + "/" + stem + ".diff";
  Status written = WriteDiffFile(path, head, parts);
  Status removed = RemoveTree(scratch);
  PLANB_RETURN_IF_ERROR(written);
  PLANB_RETURN_IF_ERROR(removed);
  // Tests only: a diff that arrives whole (its checksum is taken below) but whose last part does not unzip.
  if (FaultPointActive("snapshot_diff.corrupt")) PLANB_RETURN_IF_ERROR(FlipLastByte(path));
  out->diff = true;
  out->map = map;
  out->version = to;
  out->zip_path = path;
  out->create_time_ms = now_ms;
  return HashFile(path, &out->size, &out->checksum);
}

}  // namespace planb
