// RocksDB as a peer in the benchmarks: what a user would otherwise pick for point lookups. Built the way a read-
// mostly store is tuned: bloom filters on (10 bits per key, whole keys), an LRU block cache of a given size (the
// benches give it the raw LMDB file's size, LMDB's resident set once warm), everything else RocksDB's defaults
// (Snappy compression, 4 KiB blocks); the rows written in write batches without the WAL, flushed, then compacted
// (CompactRange over everything) so that reads meet a steady, fully compacted tree. Setup exits on failure.
#pragma once

#include <rocksdb/db.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace planb::bench {

class RocksDbPeer {
 public:
  RocksDbPeer() = default;
  RocksDbPeer(const RocksDbPeer&) = delete;
  RocksDbPeer& operator=(const RocksDbPeer&) = delete;
  ~RocksDbPeer();

  // Creates a new database in `dir` (which must not exist) holding rows [0, count) given by `row`.
  void Build(const std::string& dir, size_t count,
             const std::function<void(size_t i, std::string* key, std::string* value)>& row, uint64_t cache_bytes);

  // A point lookup; `value` pins the block (valid until it is reset or reused).
  bool Get(std::string_view key, rocksdb::PinnableSlice* value) const {
    value->Reset();
    return db_->Get(read_options_, db_->DefaultColumnFamily(), rocksdb::Slice(key.data(), key.size()), value).ok();
  }
  rocksdb::DB* db() const { return db_.get(); }
  const rocksdb::ReadOptions& read_options() const { return read_options_; }

  // Bytes of the live SST files (the data on disk once compacted; no WAL is written).
  uint64_t SstBytes() const;

 private:
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ReadOptions read_options_;
};

}  // namespace planb::bench
