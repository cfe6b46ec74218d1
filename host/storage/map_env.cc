#include "host/storage/map_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "host/common/file_util.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_meta.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
// Plugins' own tables live beside "data" and "meta" as "type.NAME" and "scheme.NAME".
// The first `count` tables `d` declares.
Status OpenPluginTables(Txn* txn, const PluginDescriptor* d, uint32_t count, const char* kind, unsigned flags,
                        std::vector<MDB_dbi>* out) {
  out->clear();
  for (uint32_t i = 0; d != nullptr && i < count; ++i) {
    std::string name = std::string(kind) + "." + d->tables[i];
    MDB_dbi dbi = 0;
    Status s = txn->OpenDbi(name.c_str(), flags, &dbi);
    if (s.code() == Code::kNotFound) return Status::Corruption("no table '" + name + "' (written by another layout?)");
    PLANB_RETURN_IF_ERROR(s);
    out->push_back(dbi);
  }
  return Status::Ok();
}

// LMDB maps the whole file and trusts its meta page: a file cut shorter than the meta's last page (a truncated
// copy, a full disk in a copy tool) would fault with SIGBUS on the first read past its end. Checked after
// mdb_env_open (which reads only the two meta pages, with pread) and before any transaction.
Status CheckFileCoversMeta(MDB_env* env, const std::string& path) {
  MDB_envinfo info;
  MDB_stat stat;
  int fd = -1;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(env, &info), path + ": reading the meta page"));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_stat(env, &stat), path + ": reading the meta page"));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_get_fd(env, &fd), path));
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError(path + "/data.mdb: " + std::strerror(errno));
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  if (static_cast<uint64_t>(st.st_size) < needed) {
    return Status::Corruption(path + "/data.mdb: truncated: the file has " + std::to_string(st.st_size) +
                              " bytes, but its LMDB meta page says it holds " + std::to_string(needed) + " (" +
                              std::to_string(info.me_last_pgno + 1) + " pages of " + std::to_string(stat.ms_psize) +
                              "); it will not be read");
  }
  return Status::Ok();
}

// A read-only open of an environment this process may not write (another user's home, a read-only mount): LMDB
// would create or open lock.mdb read-write and fail with EACCES, so such an environment is opened without the lock
// file (docs/snapshots.md says what that gives up).
unsigned ReadOnlyFlags(const std::string& path, unsigned env_flags) {
  if ((env_flags & MDB_RDONLY) == 0 || (env_flags & MDB_NOLOCK) != 0) return env_flags;
  const std::string lock = path + "/lock.mdb";
  const bool writable = ::access(lock.c_str(), F_OK) == 0 ? ::access(lock.c_str(), R_OK | W_OK) == 0
                                                          : ::access(path.c_str(), W_OK | X_OK) == 0;
  return writable ? env_flags : env_flags | MDB_NOLOCK;
}

// A map file written with another layout than the config's: said in the config's terms, with what to do. A
// shard (HOME/shards/MAP) is loaded again, as docs/maintenance.md ("A layout changed") says; any other file (a
// batch, a snapshot) came from a node whose planb or config for the map differs.
Status LayoutRefusal(const std::string& path, const ShardMeta& found, const ShardMeta& expected,
                     const MapConfig& config) {
  bool config_changed = false;
  const std::string differences = expected.Differences(found, &config_changed);
  std::string text = path + ": written as " + found.Describe() + ", but the config's [map." + config.name +
                     "] says " + expected.ConfigTerms(!config.scheme.empty()) + " (this planb writes " +
                     expected.Describe() + "): " + differences + "; a map file is never read with another layout. ";
  const fs::path where(path);
  if (where.parent_path().filename() == "shards") {
    text += "To load the map again: stop what serves this home (planb serve, its readers), move the shard away (mv " +
            path + " /somewhere/" + where.filename().string() + ".old, kept until the reload is checked), then " +
            "planb load the map's files again (a storage node whose peers hold the map may instead just start " +
            "planb serve: it fetches the map from them)" +
            (config_changed ? "; or set the config back to what wrote the shard" : "") +
            " (docs/maintenance.md, 'A layout changed')";
  } else {
    text += "It was written by a node with another planb version or config for the map: run the same planb, "
            "configured alike, on every node (docs/storage-nodes.md)";
  }
  return Status::Invalid(text);
}
}  // namespace

Status MapEnv::OpenTables(Txn* txn, unsigned create_flag) {
  Status s = txn->OpenDbi("data", create_flag | plugins_->type_descriptor().data_table_flags, &data_);
  if (s.code() == Code::kNotFound) return Status::Corruption(path_ + ": not a Plan B map (no data table)");
  PLANB_RETURN_IF_ERROR(s.WithContext(path_));
  PLANB_RETURN_IF_ERROR(
      OpenPluginTables(txn, &plugins_->type_descriptor(), plugins_->type_descriptor().table_count, "type",
                       create_flag, &store_tables_)
          .WithContext(path_));
  return OpenPluginTables(txn, plugins_->scheme_descriptor(), plugins_->scheme_tables_in_use(), "scheme",
                          create_flag, &scheme_tables_)
      .WithContext(path_);
}

Status MapEnv::Open(const std::string& path, std::shared_ptr<const MapPlugins> plugins, Mode mode,
                    unsigned env_flags, std::shared_ptr<MapEnv>* out) {
  std::error_code ec;
  if (mode == Mode::kCreate) {
    PLANB_RETURN_IF_ERROR(MakeDirectories(path));
  } else if (!fs::exists(path + "/data.mdb", ec)) {
    if (fs::exists(path, ec) && !fs::is_directory(path, ec)) {
      return Status::Corruption(path + ": not a Plan B map directory (it is a file)");
    }
    return Status::NotFound(path + ": no data.mdb");
  }
  if (mode == Mode::kOpenExisting) {
    // LMDB treats a file shorter than its two meta pages as new and would initialise it: refuse it instead.
    constexpr uintmax_t kMinimumLmdbFile = 2 * 4096;
    uintmax_t size = fs::file_size(path + "/data.mdb", ec);
    if (ec || size < kMinimumLmdbFile) {
      return Status::Corruption(path + "/data.mdb: not an LMDB file (" +
                                (ec ? ec.message() : std::to_string(size) + " bytes") + ")");
    }
  }
  std::shared_ptr<MapEnv> map(new MapEnv());
  map->path_ = path;
  map->plugins_ = std::move(plugins);
  const MapConfig& config = map->plugins_->config();
  Env::Options options;
  options.map_size = config.max_store_size;
  options.max_readers = config.max_readers;
  options.flags = mode == Mode::kOpenExisting ? ReadOnlyFlags(path, env_flags) : env_flags;
  // data, meta, batches, tombstones, shadowed, and the plugins' own tables.
  options.max_dbs = 5 + map->plugins_->type_descriptor().table_count + map->plugins_->scheme_tables_in_use();
  PLANB_RETURN_IF_ERROR(map->env_.Open(path, options));
  PLANB_RETURN_IF_ERROR(CheckFileCoversMeta(map->env(), path));
  if ((options.flags & MDB_RDONLY) == 0) {
    // LMDB creates its files 0644 (the SDK's Env passes that mode): the home's mode applies instead.
    int fd = -1;
    if (mdb_env_get_fd(map->env(), &fd) == MDB_SUCCESS) {
      PLANB_RETURN_IF_ERROR(ApplyHomeFileMode(fd, path + "/data.mdb"));
    }
    if ((options.flags & MDB_NOLOCK) == 0) PLANB_RETURN_IF_ERROR(ApplyHomeMode(path + "/lock.mdb"));
    PLANB_RETURN_IF_ERROR(ApplyHomeMode(path));  // a batch unpacked from a zip and renamed in as a shard
  }

  const ShardMeta expected = ShardMeta::Expected(*map->plugins_);
  Txn txn;
  MDB_dbi meta = 0;
  if (mode == Mode::kCreate) {
    PLANB_RETURN_IF_ERROR(txn.Begin(map->env(), 0).WithContext(path));
    PLANB_RETURN_IF_ERROR(txn.OpenDbi("meta", MDB_CREATE, &meta).WithContext(path));
    PLANB_RETURN_IF_ERROR(map->OpenTables(&txn, MDB_CREATE));
    PLANB_RETURN_IF_ERROR(expected.Write(txn.get(), meta).WithContext(path));
    PLANB_RETURN_IF_ERROR(txn.Commit().WithContext(path));
  } else {
    PLANB_RETURN_IF_ERROR(txn.Begin(map->env(), MDB_RDONLY).WithContext(path));
    Status s = txn.OpenDbi("meta", 0, &meta);
    if (s.code() == Code::kNotFound) return Status::Corruption(path + ": not a Plan B map (no meta table)");
    PLANB_RETURN_IF_ERROR(s.WithContext(path));
    ShardMeta found;
    PLANB_RETURN_IF_ERROR(ShardMeta::Read(txn.get(), meta, &found).WithContext(path));
    found.FillLegacy(expected);
    if (!(found == expected)) return LayoutRefusal(path, found, expected, config);
    PLANB_RETURN_IF_ERROR(map->OpenTables(&txn, 0));
    // "batches" too when the shard has it, here where no other transaction of this env can be opening tables: a
    // check whether a batch was merged (an upload's "already merged" answer) may then run beside a merge.
    s = txn.OpenDbi(kBatchesTableName, 0, &map->batches_);
    if (s.code() == Code::kNotFound) map->batches_ = 0;
    else PLANB_RETURN_IF_ERROR(s.WithContext(path));
    // A read-only transaction's dbi handles stay valid for the env only once the transaction commits.
    PLANB_RETURN_IF_ERROR(txn.Commit().WithContext(path));
  }
  map->meta_ = meta;
  *out = std::move(map);
  return Status::Ok();
}

bool MapEnv::Replaced() const {
  int fd = -1;
  struct stat open_file, named_file;
  if (mdb_env_get_fd(env(), &fd) != MDB_SUCCESS || ::fstat(fd, &open_file) != 0) return false;
  // Gone (an orphan deleted, mid-deletion) counts as replaced; any other failure to look (EACCES...) does not, so
  // that a cached environment keeps serving rather than failing to reopen.
  if (::stat((path_ + "/data.mdb").c_str(), &named_file) != 0) return errno == ENOENT || errno == ENOTDIR;
  return open_file.st_dev != named_file.st_dev || open_file.st_ino != named_file.st_ino;
}

Status MapEnv::OpenBatchesTable(MDB_txn* write_txn, MDB_dbi* out) const {
  const int rc = mdb_dbi_open(write_txn, kBatchesTableName, MDB_CREATE, out);
  if (rc == MDB_INCOMPATIBLE) return Status::Corruption(path_ + ": table 'batches' is not a Plan B table");
  return LmdbStatus(rc, path_ + ": opening table 'batches'");
}

}  // namespace planb
