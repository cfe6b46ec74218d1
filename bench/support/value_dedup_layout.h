// State rows in the direct scheme's layout with value_dedup (plugins/schemes/direct_key.cc, value_table.h),
// written and read by hand: the floors the state bench sets beside a direct_dedup shard (what the layout alone
// costs a raw LMDB writer or reader). Keep in step with value_table.h's format.
//   data:       key -> type byte + (0x00 + the value, at most 16 bytes | 0x01 + a reference: hash (8) + clash (2))
//   values:     XXH3-64 of the value (8 bytes, big-endian) + clash number (2 bytes, dense from 0) -> the value
//   value_refs: the same key -> the number of rows holding it (8 bytes, big-endian)
// The hand-written merge is the best a raw writer of these tables could do with a batch: the batch's distinct
// long values counted in memory first, each then found or added in the value table (in hash order) with its
// count raised once, then the rows put in key order.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "planb/bytes.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "planb/value_type.h"
#include "support/scheme_suite.h"
#include "support/shard_setup.h"

namespace planb::bench {

inline constexpr size_t kValueDedupInlineMax = 16;
inline constexpr size_t kValueRefKeySize = 10;

// A lookup by hand: the row, then its value's entry when the row holds a reference. `data` and `values` are the
// shard's tables, read in `txn`.
inline bool ValueDedupLayoutGet(MDB_txn* txn, MDB_dbi data, MDB_dbi values, std::string_view key, Bytes* value) {
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val row;
  if (mdb_get(txn, data, &k, &row) != MDB_SUCCESS || row.mv_size < 2) return false;
  const auto* p = static_cast<const uint8_t*>(row.mv_data);
  if (p[1] == 0x00) {  // inline, after the type byte and the flag
    *value = Bytes(p + 2, row.mv_size - 2);
    return true;
  }
  MDB_val ref{row.mv_size - 2, const_cast<uint8_t*>(p + 2)};
  MDB_val stored;
  if (mdb_get(txn, values, &ref, &stored) != MDB_SUCCESS) return false;
  *value = Bytes(stored);
  return true;
}

// The writer of the layout for `rows` (State rows: a key and a value each), for RegisterLayoutMergeFloor.
inline LayoutWriter ValueDedupLayoutWriter(const SuiteRows* rows) {
  enum { kData, kValues, kRefs };
  // Writes rows `at` (in key order, the last of a key kept) with `row_flags` (MDB_APPEND into an empty table).
  auto write = [rows](MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& at,
                      unsigned row_flags) {
    struct Distinct {
      uint64_t hash;
      std::string_view value;
      uint64_t rows;
      uint8_t ref[kValueRefKeySize];
    };
    std::vector<std::pair<std::string_view, std::string_view>> kv;
    Record record;
    for (const size_t i : at) {
      rows->record(i, &record);
      const std::string_view key = record.key.view();
      const std::string_view value = record.value.view();
      if (!kv.empty() && kv.back().first == key) {
        kv.back().second = value;  // `order` keeps a key's rows together, in order
      } else {
        kv.emplace_back(key, value);
      }
    }
    std::unordered_map<std::string_view, size_t> index;  // long value -> its place in `distinct`
    std::vector<Distinct> distinct;
    for (const auto& [key, value] : kv) {
      if (value.size() <= kValueDedupInlineMax) continue;
      const auto [it, added] = index.emplace(value, distinct.size());
      if (added) distinct.push_back(Distinct{XXH3_64bits(value.data(), value.size()), value, 0, {}});
      ++distinct[it->second].rows;
    }
    std::vector<size_t> by_hash(distinct.size());
    for (size_t i = 0; i < by_hash.size(); ++i) by_hash[i] = i;
    std::sort(by_hash.begin(), by_hash.end(), [&](size_t a, size_t b) { return distinct[a].hash < distinct[b].hash; });
    Cursor values;
    Cursor refs;
    CheckSetup(values.Open(txn, dbis[kValues]));
    CheckSetup(refs.Open(txn, dbis[kRefs]));
    for (const size_t at_hash : by_hash) {
      Distinct& d = distinct[at_hash];
      for (uint16_t clash = 0;; ++clash) {
        PutU64(d.ref, d.hash);
        PutU16(d.ref + 8, clash);
        MDB_val k{kValueRefKeySize, d.ref};
        MDB_val v{d.value.size(), const_cast<char*>(d.value.data())};
        const int rc = mdb_cursor_put(values.get(), &k, &v, MDB_NOOVERWRITE);
        uint64_t count = d.rows;
        if (rc == MDB_KEYEXIST) {
          if (v.mv_size != d.value.size() || std::memcmp(v.mv_data, d.value.data(), d.value.size()) != 0) continue;
          MDB_val held;
          CheckSetup(LmdbStatus(mdb_get(txn, dbis[kRefs], &k, &held), "value_refs get"));
          count += GetU64(static_cast<const uint8_t*>(held.mv_data));
        } else {
          CheckSetup(LmdbStatus(rc, "values put"));
        }
        uint8_t counted[8];
        PutU64(counted, count);
        MDB_val c{sizeof(counted), counted};
        CheckSetup(LmdbStatus(mdb_cursor_put(refs.get(), &k, &c, 0), "value_refs put"));
        break;
      }
    }
    Cursor data;
    CheckSetup(data.Open(txn, dbis[kData]));
    std::string row;
    for (const auto& [key, value] : kv) {
      row.assign(1, static_cast<char>(ValueType::kString));
      if (value.size() <= kValueDedupInlineMax) {
        row.push_back('\x00');
        row.append(value);
      } else {
        row.push_back('\x01');
        row.append(reinterpret_cast<const char*>(distinct[index.at(value)].ref), kValueRefKeySize);
      }
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      MDB_val v{row.size(), row.data()};
      CheckSetup(LmdbStatus(mdb_cursor_put(data.get(), &k, &v, row_flags), "row put"));
    }
  };

  LayoutWriter writer;
  writer.tables = {"data", "values", "value_refs"};
  writer.order = [rows](std::vector<size_t>* at) {
    std::vector<std::pair<std::string, size_t>> keyed;
    Record record;
    for (const size_t i : *at) {
      rows->record(i, &record);
      keyed.emplace_back(std::string(record.key.view()), i);
    }
    std::sort(keyed.begin(), keyed.end());
    for (size_t j = 0; j < keyed.size(); ++j) (*at)[j] = keyed[j].second;
  };
  writer.build = [write, order = writer.order](MDB_txn* txn, const std::vector<MDB_dbi>& dbis,
                                               const std::vector<size_t>& at) {
    std::vector<size_t> sorted = at;
    order(&sorted);
    write(txn, dbis, sorted, MDB_APPEND);
  };
  writer.merge = [write](MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& at) {
    write(txn, dbis, at, 0);
  };
  writer.wrong_reads = [rows](MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& at) {
    return WrongReads(*rows, at, [&](std::string_view key, Bytes* value) {
      return ValueDedupLayoutGet(txn, dbis[kData], dbis[kValues], key, value);
    });
  };
  return writer;
}

}  // namespace planb::bench
