#include "host/ingest/stream_writer.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include "host/common/disk_room.h"
#include "planb/plugin.h"
#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/storage/map_full.h"

namespace planb {
namespace {
// LMDB keeps every dirty page of a write transaction in memory; committing in slices bounds that for big files.
constexpr uint64_t kRecordsPerTxn = 100000;
}  // namespace

std::string StreamWriter::NewStreamName() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(CurrentTimeMs()) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

Status StreamWriter::RemoveAbandoned(const std::string& writer_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(writer_dir, ec)) {
    const std::string name = entry.path().filename().string();
    size_t first = name.find('-');
    size_t second = first == std::string::npos ? first : name.find('-', first + 1);
    if (second == std::string::npos) continue;  // not a stream of ours
    long pid = std::strtol(name.c_str() + first + 1, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      PLANB_RETURN_IF_ERROR(RemoveTree(entry.path().string()));
    }
  }
  if (ec) return Status::IOError("listing " + writer_dir + ": " + ec.message());
  return Status::Ok();
}

StreamWriter::StreamWriter(const MapCatalog& catalog, std::string dir) : catalog_(catalog), dir_(std::move(dir)) {}

StreamWriter::~StreamWriter() {
  if (!finished_) Discard();
}

Status StreamWriter::Begin(MapBatch* batch) {
  PLANB_RETURN_IF_ERROR(batch->txn.Begin(batch->env->env(), 0).WithContext(batch->env->path()));
  PLANB_RETURN_IF_ERROR(batch->cursor.Open(batch->txn.get(), batch->env->data()));
  batch->records_in_txn = 0;
  return Status::Ok();
}

Status StreamWriter::BatchFor(std::string_view map, MapBatch** out) {
  auto it = batches_.find(map);  // the usual case: the map's own (lower-case) name
  if (it == batches_.end()) {
    std::shared_ptr<const MapPlugins> plugins;
    PLANB_RETURN_IF_ERROR(catalog_.Get(map, &plugins));
    // `map` may be another spelling of a map already open: LMDB must not open its directory twice.
    it = batches_.find(plugins->config().name);
    if (it == batches_.end()) {
      MapBatch batch;
      batch.plugins = plugins;
      PLANB_RETURN_IF_ERROR(MapEnv::Open(dir_ + "/" + plugins->config().name, plugins, MapEnv::Mode::kCreate,
                                         MapEnv::kBatchFlags, &batch.env));
      it = batches_.emplace(plugins->config().name, std::move(batch)).first;
      PLANB_RETURN_IF_ERROR(Begin(&it->second));
    }
  }
  *out = &it->second;
  return Status::Ok();
}

Status StreamWriter::OnDisk(const MapBatch& batch, const Status& s) const {
  // The batch's LMDB file has the map's max_store_size as its map size, like the map's shard: a loader whose
  // own config gives the map less room than its records need fails here, before anything is staged.
  const std::string file = batch.env->path() + "/data.mdb";
  return DescribeMapFull(DescribeDiskFull(s, file, dir_, 0), batch.plugins->config(), "the batch being written,",
                         file);
}

Status StreamWriter::Add(std::string_view map, const Record& record) {
  MapBatch* found = nullptr;
  PLANB_RETURN_IF_ERROR(BatchFor(map, &found));
  MapBatch& batch = *found;
  if (record.value_type == ValueType::kJson && batch.plugins->type_abi_minor() < kJsonValuesMinor) {
    // Its inline value checks (planb/keyed_rows.h) would read the row back as corrupt.
    const MapPlugins& plugins = *batch.plugins;
    return Status::NotSupported("map " + plugins.config().name + ": store type '" +
                                plugins.type_descriptor().name + "' (" + plugins.type_file() +
                                ") was built against SDK " + std::to_string(kAbiMajor) + "." +
                                std::to_string(plugins.type_abi_minor()) + ", before JSON values (" +
                                std::to_string(kAbiMajor) + "." + std::to_string(kJsonValuesMinor) +
                                "): rebuild it, or load the values as text");
  }
  if (batch.records_in_txn == kRecordsPerTxn) {
    batch.cursor.Close();
    PLANB_RETURN_IF_ERROR(OnDisk(batch, batch.txn.Commit().WithContext(batch.env->path())));
    PLANB_RETURN_IF_ERROR(Begin(&batch));
  }
  ErrorBuffer error;
  Table table = batch.env->MakeTable(batch.txn.get(), batch.cursor.get());
  Code code = batch.plugins->store()->Put(table, record, &error);
  if (code != Code::kOk) {
    // A large write transaction spills dirty pages to disk, so a Put can meet a full disk too.
    const Status failed = Status::FromPlugin(code, error);
    return IsMapFull(failed) ? OnDisk(batch, failed)
                             : OnDisk(batch, failed.WithContext("map " + batch.plugins->config().name));
  }
  ++batch.records;
  ++batch.records_in_txn;
  return Status::Ok();
}

Status StreamWriter::Finish() {
  for (auto& [name, batch] : batches_) {
    batch.cursor.Close();
    PLANB_RETURN_IF_ERROR(OnDisk(batch, batch.txn.Commit().WithContext(batch.env->path())));
    const std::string map_dir = batch.env->path();
    // Keys arrive in input order, not key order (hashed keys are random), so the file is full of pages freed by
    // copy-on-write between commits. A compacting copy drops them: the batch that is zipped, uploaded and
    // unzipped on every node shrinks 2.7 times over (measured, 1M hashed rows: 250 MiB -> 94 MiB).
    const std::string compact_dir = map_dir + ".compact";
    PLANB_RETURN_IF_ERROR(MakeDirectories(compact_dir));
    PLANB_RETURN_IF_ERROR(DescribeDiskFull(
        LmdbStatus(mdb_env_copy2(batch.env->env(), compact_dir.c_str(), MDB_CP_COMPACT), "compacting " + map_dir),
        compact_dir + "/data.mdb", dir_, 0));
    batch.env.reset();  // closes the environment: the directory may now move
    PLANB_RETURN_IF_ERROR(SyncPath(compact_dir + "/data.mdb"));
    PLANB_RETURN_IF_ERROR(DurableRename(compact_dir + "/data.mdb", map_dir + "/data.mdb"));
    PLANB_RETURN_IF_ERROR(RemoveTree(compact_dir));
    PLANB_RETURN_IF_ERROR(SyncPath(map_dir));
  }
  PLANB_RETURN_IF_ERROR(MakeDirectories(dir_));  // a stream with no records is an empty directory
  PLANB_RETURN_IF_ERROR(SyncPath(dir_));
  finished_ = true;
  return Status::Ok();
}

void StreamWriter::Discard() {
  for (auto& entry : batches_) {
    entry.second.cursor.Close();
    entry.second.txn.Abort();
    entry.second.env.reset();
  }
  batches_.clear();
  (void)RemoveTree(dir_);
  finished_ = true;
}

std::map<std::string, uint64_t> StreamWriter::RecordCounts() const {
  std::map<std::string, uint64_t> counts;
  for (const auto& [name, batch] : batches_) counts[name] = batch.records;
  return counts;
}

}  // namespace planb
