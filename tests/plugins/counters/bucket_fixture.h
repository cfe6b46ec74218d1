// Test helpers for the histogram and metric store types (plugins/counters): records with or without <value>,
// batches written through Store::Put, lookups and decoded rows with the types' own fields copied out, merges
// through Store::Merge and through the host's exactly-once path (MergeIntoShard). Real plugins, real LMDB.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "host/ingest/merge_map.h"
#include "host/storage/map_env.h"
#include "planb/lmdb.h"
#include "planb/store.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb::testing {

// One <reference>: `value` absent = no <value>.
struct CountEvent {
  std::string key;
  int64_t time_ms = 0;
  std::optional<std::string> value;
};

inline Record ToRecord(const CountEvent& event) {
  Record record;
  record.kind = RecordKind::kReference;
  record.has_key = true;
  record.key = Bytes(event.key);
  record.time_given = true;
  record.time_ms = event.time_ms;
  record.has_value = event.value.has_value();
  if (event.value) record.value = Bytes(*event.value);
  return record;
}

// A bucket as a lookup or a decoded row shows it: Key, BucketStart and the own fields (Count, then for metric
// Sum, Min, Max, Mean).
struct Bucket {
  Code code = Code::kNotFound;
  std::string key;
  int64_t start = 0;
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  std::string error;
  bool operator==(const Bucket& o) const {
    return code == o.code && key == o.key && start == o.start && count == o.count && sum == o.sum && min == o.min &&
           max == o.max && mean == o.mean;
  }
};
inline void PrintTo(const Bucket& b, std::ostream* os) {
  *os << "{code " << static_cast<int>(b.code) << " key '" << b.key << "' start " << b.start << " count " << b.count
      << " sum " << b.sum << " min " << b.min << " max " << b.max << " mean " << b.mean << " " << b.error << "}";
}

inline constexpr uint32_t kMaxOwnFields = 8;

inline Bucket MakeBucket(Code code, const Row& row, const FieldValue* own, const ErrorBuffer& error) {
  Bucket b;
  b.code = code;
  if (code != Code::kOk) {
    b.error = error.message;
    return b;
  }
  b.key = std::string(row.key.view());
  b.start = row.effective_time_ms;
  b.count = own[2].number;
  b.sum = own[3].real;
  b.min = own[4].real;
  b.max = own[5].real;
  b.mean = own[6].real;
  return b;
}

// Store::Get of (`key`, `time_ms`) in a fresh read transaction.
inline Bucket GetBucket(const MapEnv& env, std::string_view key, int64_t time_ms) {
  Txn txn;
  Cursor cursor;
  Status s = txn.Begin(env.env(), MDB_RDONLY);
  if (s.ok()) s = cursor.Open(txn.get(), env.data());
  if (!s.ok()) {
    Bucket b;
    b.code = s.code();
    b.error = s.message();
    return b;
  }
  LookupKey lookup;
  lookup.key = Bytes(key);
  lookup.time_ms = time_ms;
  FieldValue own[kMaxOwnFields] = {};
  Row row;
  row.own_fields = own;
  row.own_field_count = env.plugins().type_descriptor().field_count;
  ErrorBuffer error;
  const Code code = env.plugins().store()->Get(env.MakeTable(txn.get(), cursor.get()), lookup, &row, &error);
  return MakeBucket(code, row, own, error);
}

// Every row in LMDB order, decoded by Store::DecodeRow.
inline Status DumpBuckets(const MapEnv& env, std::vector<Bucket>* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), cursor.get());
  Cursor walk;
  PLANB_RETURN_IF_ERROR(walk.Open(txn.get(), env.data()));
  Bytes key;
  Bytes value;
  for (bool more = walk.Get(MDB_FIRST, &key, &value); more; more = walk.Get(MDB_NEXT, &key, &value)) {
    FieldValue own[kMaxOwnFields] = {};
    Row row;
    row.own_fields = own;
    row.own_field_count = env.plugins().type_descriptor().field_count;
    ErrorBuffer error;
    const Code code = env.plugins().store()->DecodeRow(table, key, value, &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
    out->push_back(MakeBucket(code, row, own, error));
  }
  return Status::Ok();
}

// Store::Put of each event in one write transaction, committed only when every Put succeeds.
inline Status PutCounts(const std::shared_ptr<MapEnv>& env, const std::vector<CountEvent>& events) {
  MapTxn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env, true));
  for (const CountEvent& event : events) {
    ErrorBuffer error;
    const Code code = env->plugins().store()->Put(txn.table(), ToRecord(event), &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
  }
  return txn.Commit();
}

// The host's merge of `batch` into `shard` under `batch_id` (exactly once per shard).
inline Status HostMerge(const MapEnv& batch, const MapEnv& shard, const std::string& batch_id, MapMergeResult* result) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(batch.env(), MDB_RDONLY));
  return MergeIntoShard(batch.plugins(), batch, txn.get(), shard, batch_id, 1700000000000, result);
}

}  // namespace planb::testing
