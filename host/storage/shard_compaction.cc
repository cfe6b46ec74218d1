#include "host/storage/shard_compaction.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "host/common/fault_point.h"
#include "host/common/file_util.h"
#include "host/storage/content_version.h"
#include "host/storage/dense_copy.h"
#include "host/storage/shard_space.h"
#include "planb/lmdb.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)  // linux/fs.h
#endif

namespace planb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCompactSuffix = ".compact";

// What a copy must share with its shard: the content version and every table's entry count (the data table's
// are its rows), read in one transaction.
struct ShardIdentity {
  ContentVersion version;
  std::map<std::string, uint64_t> entries;  // by table name

  bool operator==(const ShardIdentity& o) const { return version == o.version && entries == o.entries; }
  uint64_t rows() const {
    auto it = entries.find("data");
    return it == entries.end() ? 0 : it->second;
  }
  std::string Describe() const {
    std::string text = "version " + version.ToString() + ", entries";
    for (const auto& [table, count] : entries) text += " " + table + "=" + std::to_string(count);
    return text;
  }
};

// A named table's record in the main table (dbi 1) is its MDB_db; entries are the u64 at offset 32 (shard_space.cc
// reads the same records).
Status ReadIdentity(const MapEnv& env, ShardIdentity* out) {
  constexpr MDB_dbi kMainDbi = 1;
  constexpr size_t kDbSize = 48, kDbEntries = 32;
  *out = ShardIdentity();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(env.path()));
  MDB_cursor* cursor = nullptr;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(txn.get(), kMainDbi, &cursor), env.path() + ": main table"));
  MDB_val k, v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    if (v.mv_size != kDbSize) continue;
    uint64_t entries = 0;
    std::memcpy(&entries, static_cast<const uint8_t*>(v.mv_data) + kDbEntries, sizeof entries);
    out->entries[std::string(static_cast<const char*>(k.mv_data), k.mv_size)] = entries;
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, env.path() + ": reading the main table");
  return ReadContentVersion(txn.get(), env.meta(), &out->version).WithContext(env.path());
}

uint64_t FileBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}


// Steps 1 and 2 of CompactShard: the copy, synced and checked. REQUIRES: `copy_path` does not exist.
Status WriteCheckedCopy(const Home& home, const std::shared_ptr<const MapPlugins>& plugins, MapEnv& shard,
                        const std::string& copy_path, const ShardIdentity& identity) {
  const std::string context = "compacting " + shard.path() + " into " + copy_path;
  PLANB_RETURN_IF_ERROR(MakeDirectories(copy_path));
  // Row by row into full pages (dense_copy.h): LMDB's compacting copy would keep the half-empty pages that
  // deletions and merges leave.
  DenseCopyStats stats;
  PLANB_RETURN_IF_ERROR(DenseCopy(shard.env(), copy_path, &stats).WithContext(context));
  // Its lock.mdb was made 0644 less the umask: made again below by the check's open, with the home's mode.
  if (::unlink((copy_path + "/lock.mdb").c_str()) != 0 && errno != ENOENT) {
    return Status::IOError("removing " + copy_path + "/lock.mdb: " + std::strerror(errno));
  }
  PLANB_RETURN_IF_ERROR(ApplyHomeMode(copy_path + "/data.mdb"));
  PLANB_RETURN_IF_ERROR(SyncPath(copy_path + "/data.mdb"));
  PLANB_RETURN_IF_ERROR(SyncPath(copy_path));
  PLANB_RETURN_IF_ERROR(SyncPath(home.shards()));
  // The copy must open as this map (meta, tables) and hold what the shard holds. Opened as a shard is (read
  // transactions only), so that its lock.mdb is made now with the home's mode, not later by whichever reader
  // opens the swapped shard first (LMDB makes it 0644 less the umask).
  std::shared_ptr<MapEnv> copy;
  PLANB_RETURN_IF_ERROR(
      MapEnv::Open(copy_path, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &copy).WithContext(context));
  ShardIdentity copied;
  PLANB_RETURN_IF_ERROR(ReadIdentity(*copy, &copied));
  if (!(copied == identity)) {
    return Status::Corruption(context + ": the copy holds " + copied.Describe() + ", the shard " + identity.Describe() +
                              "; the shard is left as it was");
  }
  return Status::Ok();
}

}  // namespace

// glibc before 2.28 has no renameat2 wrapper.
Status ExchangeDirectories(const std::string& a, const std::string& b) {
  if (::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0) {
    const int error = errno;
    std::string why = std::strerror(error);
    if (error == EINVAL || error == ENOSYS) why += " (the filesystem cannot exchange directories atomically)";
    return Status::IOError("exchanging " + a + " with " + b + ": " + why);
  }
  return Status::Ok();
}

std::string CompactionPath(const Home& home, const std::string& map) {
  return home.shards() + "/." + map + kCompactSuffix;
}

Status CompactShard(const Home& home, EnvCache& envs, const std::shared_ptr<const MapPlugins>& plugins,
                    CompactionResult* out, uint64_t min_free_bytes) {
  *out = CompactionResult();
  const std::string& map = plugins->config().name;
  const std::string shard_path = home.ShardPath(map);
  const std::string copy_path = CompactionPath(home, map);
  std::shared_ptr<MapEnv> shard;
  PLANB_RETURN_IF_ERROR(envs.Get(shard_path, plugins, &shard));
  ShardIdentity identity;
  PLANB_RETURN_IF_ERROR(ReadIdentity(*shard, &identity));
  ShardSpace space;
  PLANB_RETURN_IF_ERROR(MeasureShard(*shard, &space));
  out->rows = identity.rows();
  out->bytes_before = space.file_bytes;

  const uint64_t needed = space.used_pages * space.page_size;
  const DiskRoom room = MeasureDiskRoom(home.shards(), min_free_bytes);
  if (!room.Fits(needed)) {
    return Status(Code::kFull, "not enough disk to compact " + shard_path + ": the copy needs " +
                                   std::to_string(needed) + " bytes and " + room.Describe() +
                                   "; the shard is left as it was");
  }
  PLANB_RETURN_IF_ERROR(RemoveTree(copy_path));
  Status copied = WriteCheckedCopy(home, plugins, *shard, copy_path, identity);
  shard.reset();
  if (!copied.ok()) {
    (void)RemoveTree(copy_path);  // the error says what matters; a leftover is removed by the next run anyway
    return copied;
  }
  out->bytes_after = FileBytes(copy_path + "/data.mdb");

  return SwapShardIn(home, copy_path, shard_path, "reclaim.before_swap", "reclaim.after_swap");
}

Status SwapShardIn(const Home& home, const std::string& copy_path, const std::string& shard_path,
                   const char* before_fault, const char* after_fault) {
  FaultPoint(before_fault);
  PLANB_RETURN_IF_ERROR(ExchangeDirectories(copy_path, shard_path));
  PLANB_RETURN_IF_ERROR(SyncPath(home.shards()));
  FaultPoint(after_fault);
  // A cache keeps its entry: its next Get sees the swap (MapEnv::Replaced) and opens the new shard under its
  // mutex. Forgetting it here could let two threads open the new shard twice (LMDB forbids that in a process).
  // copy_path now holds the old shard.
  PLANB_RETURN_IF_ERROR(RemoveTree(copy_path));
  return SyncPath(home.shards());
}

Status RemoveCompactionLeftovers(const Home& home, std::vector<std::string>* removed) {
  std::error_code ec;
  fs::directory_iterator it(home.shards(), ec);
  if (ec == std::errc::no_such_file_or_directory) return Status::Ok();
  if (ec) return Status::IOError(home.shards() + ": " + ec.message());
  std::vector<std::string> found;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const size_t suffix = std::strlen(kCompactSuffix);
    if (name.size() > suffix + 1 && name[0] == '.' && name.compare(name.size() - suffix, suffix, kCompactSuffix) == 0) {
      found.push_back(name);
    }
  }
  if (ec) return Status::IOError(home.shards() + ": " + ec.message());
  for (const std::string& name : found) {
    PLANB_RETURN_IF_ERROR(RemoveTree(home.shards() + "/" + name));
    if (removed != nullptr) removed->push_back(name);
  }
  if (!found.empty()) PLANB_RETURN_IF_ERROR(SyncPath(home.shards()));
  return Status::Ok();
}

}  // namespace planb
