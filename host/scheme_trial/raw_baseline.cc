#include "host/scheme_trial/raw_baseline.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "host/common/file_util.h"
#include "host/scheme_trial/lookup_timer.h"
#include "host/xml/reference_reader.h"
#include "lmdb.h"

namespace planb {
namespace {

using Clock = std::chrono::steady_clock;

Status Lmdb(int rc, const std::string& what) {
  return rc == MDB_SUCCESS ? Status::Ok() : Status::IOError("raw LMDB: " + what + ": " + mdb_strerror(rc));
}

bool Stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

// One plain LMDB environment (one file, the unnamed table), closed on destruction.
class RawEnv {
 public:
  ~RawEnv() {
    if (env_ != nullptr) mdb_env_close(env_);
  }
  Status Open(const std::string& path, uint64_t map_size) {
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_create(&env_), "creating an environment"));
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_set_mapsize(env_, map_size), "setting the map size"));
    // MDB_NOSUBDIR: a file; NOSYNC off: commits are durable as the host's are.
    return Lmdb(mdb_env_open(env_, path.c_str(), MDB_NOSUBDIR | MDB_NOTLS, 0600), "opening " + path);
  }
  MDB_env* get() const { return env_; }

 private:
  MDB_env* env_ = nullptr;
};

// A transaction aborted on destruction unless committed.
class RawTxn {
 public:
  ~RawTxn() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  Status Begin(MDB_env* env, unsigned flags) { return Lmdb(mdb_txn_begin(env, nullptr, flags, &txn_), "begin"); }
  Status Commit() {
    MDB_txn* t = txn_;
    txn_ = nullptr;
    return Lmdb(mdb_txn_commit(t), "commit");
  }
  MDB_txn* get() const { return txn_; }

 private:
  MDB_txn* txn_ = nullptr;
};

double PerSecond(uint64_t rows, Clock::duration time) {
  const double seconds = std::chrono::duration<double>(time).count();
  return seconds > 0 ? static_cast<double>(rows) / seconds : 0;
}

// One batch file per input file, one mdb_put per record of `map` with a key.
Status LoadBatches(const std::string& map, const MapSample& sample, uint64_t map_size, const std::string& dir,
                   const std::atomic<bool>* stop, std::vector<std::string>* batches, TrialFigures* out) {
  Clock::duration spent{0};
  for (size_t i = 0; i < sample.files.size(); ++i) {
    const std::string& file = sample.files[i];
    struct stat info;
    const int64_t mtime = ::stat(file.c_str(), &info) == 0 ? int64_t{info.st_mtim.tv_sec} * 1000 : 0;
    const std::string path = dir + "/batch-" + std::to_string(i) + ".mdb";
    const Clock::time_point start = Clock::now();
    RawEnv env;
    PLANB_RETURN_IF_ERROR(env.Open(path, map_size));
    RawTxn txn;
    PLANB_RETURN_IF_ERROR(txn.Begin(env.get(), 0));
    MDB_dbi dbi = 0;
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(txn.get(), nullptr, 0, &dbi), "opening the table"));
    Status s = ReadReferenceDataFile(file, mtime, [&](const ParsedRecord& parsed) {
      if (Stopped(stop)) return Status::Internal("interrupted");
      if (parsed.map != map || !parsed.record.has_key || parsed.record.key.size == 0) return Status::Ok();
      MDB_val k = parsed.record.key.mdb();
      MDB_val v = parsed.record.value.mdb();
      ++out->records;
      return Lmdb(mdb_put(txn.get(), dbi, &k, &v, 0), "put");
    });
    PLANB_RETURN_IF_ERROR(s);
    PLANB_RETURN_IF_ERROR(txn.Commit());
    spent += Clock::now() - start;
    batches->push_back(path);
  }
  out->load_rows_per_s = PerSecond(out->records, spent);
  return Status::Ok();
}

// Each batch's rows into the shard: a cursor over the batch, one mdb_put per row, one write transaction per batch.
Status MergeBatches(const std::vector<std::string>& batches, uint64_t map_size, const RawEnv& shard,
                    const std::atomic<bool>* stop, TrialFigures* out) {
  Clock::duration spent{0};
  uint64_t rows = 0;
  for (const std::string& path : batches) {
    if (Stopped(stop)) return Status::Internal("interrupted");
    const Clock::time_point start = Clock::now();
    RawEnv batch;
    PLANB_RETURN_IF_ERROR(batch.Open(path, map_size));
    RawTxn read;
    PLANB_RETURN_IF_ERROR(read.Begin(batch.get(), MDB_RDONLY));
    RawTxn write;
    PLANB_RETURN_IF_ERROR(write.Begin(shard.get(), 0));
    MDB_dbi batch_dbi = 0;
    MDB_dbi shard_dbi = 0;
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(read.get(), nullptr, 0, &batch_dbi), "opening the batch table"));
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(write.get(), nullptr, 0, &shard_dbi), "opening the shard table"));
    MDB_cursor* cursor = nullptr;
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_cursor_open(read.get(), batch_dbi, &cursor), "opening a cursor"));
    MDB_val k;
    MDB_val v;
    int rc = MDB_SUCCESS;
    for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      rc = mdb_put(write.get(), shard_dbi, &k, &v, 0);
      if (rc != MDB_SUCCESS) break;
      ++rows;
    }
    mdb_cursor_close(cursor);
    if (rc != MDB_NOTFOUND) return Lmdb(rc, "merging " + path);
    PLANB_RETURN_IF_ERROR(write.Commit());
    spent += Clock::now() - start;
  }
  out->merge_rows_per_s = PerSecond(rows, spent);
  return Status::Ok();
}

// As TimeLookups: every probe once untimed, then once timed; probes whose outcome is not `expect_found` dropped.
Status TimeGets(MDB_txn* txn, MDB_dbi dbi, const std::vector<LookupProbe>& probes, bool expect_found,
                const std::atomic<bool>* stop, std::vector<int64_t>* scratch, LatencyFigures* out) {
  *out = LatencyFigures();
  scratch->clear();
  scratch->reserve(probes.size());
  MDB_val v;
  for (const LookupProbe& p : probes) {
    MDB_val k{p.key.size(), const_cast<char*>(p.key.data())};
    static_cast<void>(mdb_get(txn, dbi, &k, &v));
  }
  size_t done = 0;
  for (const LookupProbe& p : probes) {
    if ((++done & 1023) == 0 && Stopped(stop)) return Status::Internal("interrupted");
    MDB_val k{p.key.size(), const_cast<char*>(p.key.data())};
    const Clock::time_point start = Clock::now();
    const int rc = mdb_get(txn, dbi, &k, &v);
    const Clock::time_point end = Clock::now();
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return Lmdb(rc, "get");
    if ((rc == MDB_SUCCESS) != expect_found) continue;
    scratch->push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  }
  out->lookups = scratch->size();
  if (scratch->empty()) return Status::Ok();
  out->p50_ns = Percentile(scratch, 50);
  out->p99_ns = Percentile(scratch, 99);
  return Status::Ok();
}

}  // namespace

Status RunRawBaseline(const std::string& map, const MapSample& sample, uint64_t map_size, const std::string& dir,
                      const std::atomic<bool>* stop, std::vector<int64_t>* timings, TrialFigures* out) {
  *out = TrialFigures();
  PLANB_RETURN_IF_ERROR(MakeDirectories(dir));
  std::vector<std::string> batches;
  PLANB_RETURN_IF_ERROR(LoadBatches(map, sample, map_size, dir, stop, &batches, out));
  const std::string shard_path = dir + "/shard.mdb";
  RawEnv shard;
  PLANB_RETURN_IF_ERROR(shard.Open(shard_path, map_size));
  PLANB_RETURN_IF_ERROR(MergeBatches(batches, map_size, shard, stop, out));

  RawTxn read;
  PLANB_RETURN_IF_ERROR(read.Begin(shard.get(), MDB_RDONLY));
  MDB_dbi dbi = 0;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(read.get(), nullptr, 0, &dbi), "opening the shard table"));
  PLANB_RETURN_IF_ERROR(TimeGets(read.get(), dbi, sample.hits, true, stop, timings, &out->hits));
  PLANB_RETURN_IF_ERROR(TimeGets(read.get(), dbi, sample.misses, false, stop, timings, &out->misses));
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_stat(read.get(), dbi, &stat), "stat"));
  out->sizes.rows = stat.ms_entries;
  std::error_code ec;
  out->sizes.file_bytes = std::filesystem::file_size(shard_path, ec);
  return Status::Ok();
}

}  // namespace planb
