#include "support/rocksdb_peer.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>

namespace planb::bench {
namespace {

void CheckRocks(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: rocksdb %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

constexpr size_t kBatchRows = 10000;

}  // namespace

RocksDbPeer::~RocksDbPeer() {
  if (db_) db_->Close().PermitUncheckedError();
}

void RocksDbPeer::Build(const std::string& dir, size_t count,
                        const std::function<void(size_t i, std::string* key, std::string* value)>& row,
                        uint64_t cache_bytes) {
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.block_cache = rocksdb::NewLRUCache(cache_bytes);
  rocksdb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* db = nullptr;
  CheckRocks(rocksdb::DB::Open(options, dir, &db), "open");
  db_.reset(db);
  rocksdb::WriteOptions write;
  write.disableWAL = true;
  std::string key;
  std::string value;
  rocksdb::WriteBatch batch;
  for (size_t i = 0; i < count; ++i) {
    row(i, &key, &value);
    CheckRocks(batch.Put(key, value), "put");
    if (batch.Count() == kBatchRows || i + 1 == count) {
      CheckRocks(db_->Write(write, &batch), "write");
      batch.Clear();
    }
  }
  CheckRocks(db_->Flush(rocksdb::FlushOptions()), "flush");
  rocksdb::CompactRangeOptions compact;
  compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  CheckRocks(db_->CompactRange(compact, nullptr, nullptr), "compact");
}

uint64_t RocksDbPeer::SstBytes() const {
  uint64_t bytes = 0;
  if (!db_->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &bytes)) return 0;
  return bytes;
}

}  // namespace planb::bench
