// State rows in the lookup_table scheme's layout (plugins/schemes/lookup_table_key.cc version 1 and id_index.h,
// hash_bits 64, no value_dedup), written and read by hand: the floors the state bench sets beside a lookup_table
// shard (what the layout alone costs a raw LMDB writer or reader). Keep in step with the scheme's format.
//   index: XXH3-64 of the key (8 bytes, big-endian) + clash number (2 bytes, dense from 0) -> id (4 bytes) + key
//   ids:   id (4 bytes, big-endian) -> key;  "n" -> the next id (8 bytes, big-endian)
//   data:  id -> type byte + value
// The hand-written merge is the best a raw writer of these tables could do with a batch of new keys in the index's
// order (a batch file's index gives them so): one put per key into the index, which also tells a new key from
// one already held, ids handed out in that order, so that the ids and the rows are appended.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "planb/bytes.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "planb/value_type.h"
#include "support/scheme_suite.h"
#include "support/shard_setup.h"

namespace planb::bench {

inline constexpr size_t kLookupTableIndexKeySize = 10;
inline constexpr size_t kLookupTableIdSize = 4;

inline void LookupTableIndexKey(uint64_t hash, uint16_t clash, uint8_t out[kLookupTableIndexKeySize]) {
  PutU64(out, hash);
  PutU16(out + 8, clash);
}

// A lookup by hand: the index entries under the key's hash from clash 0 until the key's (or an absent number),
// then the row of its id. `index` and `data` are the shard's tables, read in `txn`.
inline bool LookupTableLayoutGet(MDB_txn* txn, MDB_dbi index, MDB_dbi data, std::string_view key, Bytes* value) {
  const uint64_t hash = XXH3_64bits(key.data(), key.size());
  uint8_t probe[kLookupTableIndexKeySize];
  for (uint16_t clash = 0;; ++clash) {
    LookupTableIndexKey(hash, clash, probe);
    MDB_val k{sizeof(probe), probe};
    MDB_val entry;
    if (mdb_get(txn, index, &k, &entry) != MDB_SUCCESS || entry.mv_size < kLookupTableIdSize) return false;
    if (entry.mv_size - kLookupTableIdSize != key.size() ||
        std::memcmp(static_cast<const uint8_t*>(entry.mv_data) + kLookupTableIdSize, key.data(), key.size()) != 0) {
      continue;  // another key under this hash
    }
    MDB_val id{kLookupTableIdSize, entry.mv_data};
    MDB_val row;
    if (mdb_get(txn, data, &id, &row) != MDB_SUCCESS || row.mv_size == 0) return false;
    *value = Bytes(static_cast<const uint8_t*>(row.mv_data) + 1, row.mv_size - 1);  // after the type byte
    return true;
  }
}

// The writer of the layout for `rows` (State rows: a key and a value each), for RegisterLayoutMergeFloor.
inline LayoutWriter LookupTableLayoutWriter(const SuiteRows* rows) {
  enum { kIndex, kIds, kData };
  struct Row {
    uint64_t hash;
    std::string_view key;
    std::string_view value;
  };
  // Rows `at` as given; a key's later row replaces the one before it when they come together.
  auto read = [rows](const std::vector<size_t>& at) {
    std::vector<Row> out;
    Record record;
    for (const size_t i : at) {
      rows->record(i, &record);
      const std::string_view key = record.key.view();
      const std::string_view value = record.value.view();
      const Row row{XXH3_64bits(key.data(), key.size()), key, value};
      if (!out.empty() && out.back().key == key) {
        out.back() = row;
      } else {
        out.push_back(row);
      }
    }
    return out;
  };
  // Rows `at` in index order; of rows with the same key, the last one given.
  auto in_index_order = [read](const std::vector<size_t>& at) {
    std::vector<Row> out = read(at);
    std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) {
      return a.hash != b.hash ? a.hash < b.hash : a.key < b.key;
    });
    std::vector<Row> unique;
    for (size_t i = 0; i < out.size(); ++i) {
      if (i + 1 < out.size() && out[i + 1].key == out[i].key) continue;
      unique.push_back(out[i]);
    }
    return unique;
  };
  // Writes `sorted` (new keys, in index order) from id `*next` on, through one cursor per table.
  auto write = [](MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<Row>& sorted, uint64_t* next,
                  unsigned index_flags) {
    Cursor index;
    Cursor ids;
    Cursor data;
    CheckSetup(index.Open(txn, dbis[kIndex]));
    CheckSetup(ids.Open(txn, dbis[kIds]));
    CheckSetup(data.Open(txn, dbis[kData]));
    uint8_t entry_key[kLookupTableIndexKeySize];
    uint8_t id[kLookupTableIdSize];
    std::string row;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const Row& r = sorted[i];
      PutU32(id, static_cast<uint32_t>(*next));
      // Clash numbers: the next free one under the hash (keys sharing one come together in this order).
      uint16_t clash = 0;
      while (i > clash && sorted[i - clash - 1].hash == r.hash) ++clash;
      LookupTableIndexKey(r.hash, clash, entry_key);
      MDB_val k{sizeof(entry_key), entry_key};
      MDB_val v{kLookupTableIdSize + r.key.size(), nullptr};
      CheckSetup(LmdbStatus(mdb_cursor_put(index.get(), &k, &v, index_flags | MDB_RESERVE), "index put"));
      std::memcpy(v.mv_data, id, sizeof(id));
      std::memcpy(static_cast<uint8_t*>(v.mv_data) + kLookupTableIdSize, r.key.data(), r.key.size());
      k = MDB_val{sizeof(id), id};
      v = MDB_val{r.key.size(), const_cast<char*>(r.key.data())};
      CheckSetup(LmdbStatus(mdb_cursor_put(ids.get(), &k, &v, 0), "ids put"));
      row.assign(1, static_cast<char>(ValueType::kString));
      row.append(r.value);
      v = MDB_val{row.size(), row.data()};
      CheckSetup(LmdbStatus(mdb_cursor_put(data.get(), &k, &v, MDB_APPEND), "data append"));
      ++*next;
    }
    uint8_t counter[8];
    PutU64(counter, *next);
    MDB_val k{1, const_cast<char*>("n")};
    MDB_val v{sizeof(counter), counter};
    CheckSetup(LmdbStatus(mdb_cursor_put(ids.get(), &k, &v, 0), "counter put"));
  };

  LayoutWriter writer;
  writer.tables = {"index", "ids", "data"};
  writer.build = [in_index_order, write](MDB_txn* txn, const std::vector<MDB_dbi>& dbis,
                                         const std::vector<size_t>& at) {
    uint64_t next = 0;
    write(txn, dbis, in_index_order(at), &next, MDB_APPEND);
  };
  writer.order = [rows](std::vector<size_t>* at) {
    std::vector<std::pair<uint64_t, size_t>> keyed;
    Record record;
    for (const size_t i : *at) {
      rows->record(i, &record);
      keyed.emplace_back(XXH3_64bits(record.key.data, record.key.size), i);
    }
    std::sort(keyed.begin(), keyed.end());
    for (size_t j = 0; j < keyed.size(); ++j) (*at)[j] = keyed[j].second;
  };
  // New keys only (the merge_txn group's batches): the index put with MDB_NOOVERWRITE is the check that a key is
  // new, and a key the shard holds under the same hash would end the run (none does in these data sets).
  writer.merge = [write, read](MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& at) {
    MDB_val k{1, const_cast<char*>("n")};
    MDB_val v;
    CheckSetup(LmdbStatus(mdb_get(txn, dbis[kIds], &k, &v), "counter get"));
    uint64_t next = GetU64(static_cast<const uint8_t*>(v.mv_data));
    write(txn, dbis, read(at), &next, MDB_NOOVERWRITE);  // `order` keeps a key's rows together, in order
  };
  writer.wrong_reads = [rows](MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& at) {
    return WrongReads(*rows, at, [&](std::string_view key, Bytes* value) {
      return LookupTableLayoutGet(txn, dbis[kIndex], dbis[kData], key, value);
    });
  };
  return writer;
}

}  // namespace planb::bench
