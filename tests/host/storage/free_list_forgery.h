// Test helper (header only): LMDB files whose free list was forged, as an attacker builds them with liblmdb and a
// few patched bytes. Shared by the verifier's and the merge's tests.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_env.h"

namespace planb::testing {

// Deletes every third row of table `table` of the LMDB environment `dir` in one write transaction, so that the
// free list (FREE_DBI) gets an entry. Returns "" or what failed.
inline std::string DeleteSomeRows(const std::string& dir, const char* table) {
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != 0) return "mdb_env_create";
  mdb_env_set_maxdbs(env, 16);
  mdb_env_set_mapsize(env, size_t{1} << 30);
  std::string failed;
  if (mdb_env_open(env, dir.c_str(), 0, 0644) != 0) failed = "opening " + dir;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  if (failed.empty() && (mdb_txn_begin(env, nullptr, 0, &txn) != 0 || mdb_dbi_open(txn, table, 0, &dbi) != 0)) {
    failed = "opening table";
  }
  if (failed.empty()) {
    MDB_cursor* cursor = nullptr;
    mdb_cursor_open(txn, dbi, &cursor);
    MDB_val k, v;
    int n = 0;
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      if (n++ % 3 == 0) mdb_cursor_del(cursor, 0);
    }
    mdb_cursor_close(cursor);
    if (mdb_txn_commit(txn) != 0) failed = "commit";
  }
  mdb_env_close(env);
  return failed;
}

// Writes the first row of table `table` back as it is, in one write transaction: the content stays, the other meta
// page becomes the current one. Returns "" or what failed.
inline std::string RewriteFirstRow(const std::string& dir, const char* table) {
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != 0) return "mdb_env_create";
  mdb_env_set_maxdbs(env, 16);
  mdb_env_set_mapsize(env, size_t{1} << 30);
  std::string failed;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  MDB_val k, v;
  if (mdb_env_open(env, dir.c_str(), 0, 0644) != 0) failed = "opening " + dir;
  if (failed.empty() && (mdb_txn_begin(env, nullptr, 0, &txn) != 0 || mdb_dbi_open(txn, table, 0, &dbi) != 0)) {
    failed = "opening table";
  }
  if (failed.empty()) {
    MDB_cursor* cursor = nullptr;
    mdb_cursor_open(txn, dbi, &cursor);
    if (mdb_cursor_get(cursor, &k, &v, MDB_FIRST) != 0) failed = "no row";
    const std::string key(static_cast<const char*>(k.mv_data), k.mv_size);
    const std::string value(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_cursor_close(cursor);
    MDB_val key_val{key.size(), const_cast<char*>(key.data())};
    MDB_val value_val{value.size(), const_cast<char*>(value.data())};
    if (failed.empty() && mdb_put(txn, dbi, &key_val, &value_val, 0) != 0) failed = "rewriting the row";
    if (failed.empty() && mdb_txn_commit(txn) != 0) failed = "commit";
    if (!failed.empty() && failed != "commit") mdb_txn_abort(txn);
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  mdb_env_close(env);
  return failed;
}

// The page numbers the free list of `dir` lists (first entry first), and `live`, the number of a page that holds
// a row of table `table` (a leaf: found through a row's address, since the map is page aligned).
inline std::string ReadFreeListAndLivePage(const std::string& dir, const char* table, std::vector<uint64_t>* free_list,
                                           uint64_t* live) {
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != 0) return "mdb_env_create";
  mdb_env_set_maxdbs(env, 16);
  std::string failed;
  MDB_txn* txn = nullptr;
  if (mdb_env_open(env, dir.c_str(), MDB_RDONLY | MDB_NOLOCK, 0644) != 0 ||
      mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) != 0) {
    mdb_env_close(env);
    return "opening " + dir;
  }
  MDB_cursor* cursor = nullptr;
  MDB_val k, v;
  mdb_cursor_open(txn, 0, &cursor);
  if (mdb_cursor_get(cursor, &k, &v, MDB_FIRST) == 0) {
    std::vector<uint64_t> ids(v.mv_size / 8);
    std::memcpy(ids.data(), v.mv_data, ids.size() * 8);
    free_list->assign(ids.begin() + 1, ids.end());
  } else {
    failed = "the free list is empty";
  }
  mdb_cursor_close(cursor);
  MDB_dbi dbi = 0;
  if (failed.empty() && mdb_dbi_open(txn, table, 0, &dbi) == 0) {
    mdb_cursor_open(txn, dbi, &cursor);
    if (mdb_cursor_get(cursor, &k, &v, MDB_LAST) == 0) {
      const uintptr_t page = reinterpret_cast<uintptr_t>(k.mv_data) & ~uintptr_t{4095};
      std::memcpy(live, reinterpret_cast<const void*>(page), sizeof *live);  // MDB_page starts with its number
    } else {
      failed = "no row";
    }
    mdb_cursor_close(cursor);
  } else if (failed.empty()) {
    failed = "no table";
  }
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return failed;
}

// Replaces, in every copy of the free list's first entry in `dir`/data.mdb, its page number at `index` with
// `page`. Returns "" or what failed.
inline std::string PatchFreeList(const std::string& dir, const std::vector<uint64_t>& free_list, size_t index,
                                 uint64_t page) {
  std::string entry(8 * (free_list.size() + 1), '\0');
  const uint64_t count = free_list.size();
  std::memcpy(&entry[0], &count, 8);
  std::memcpy(&entry[8], free_list.data(), 8 * free_list.size());
  std::string data = ReadFile(dir + "/data.mdb");
  size_t patched = 0;
  for (size_t at = data.find(entry); at != std::string::npos; at = data.find(entry, at + 1)) {
    std::memcpy(&data[at + 8 + 8 * index], &page, 8);
    ++patched;
  }
  if (patched == 0) return "the free list's entry is not in the file";
  WriteFile(dir + "/data.mdb", data);
  return "";
}

// The root page of the main table (which names the tables), from the current meta page of `dir`/data.mdb: the
// first page any write transaction touches. MDB_meta after the 16-byte page header: the main table's MDB_db at
// 72 (its root at +40), txnid at 128; meta pages 0 and 1 of 4096 bytes, the one with the larger txnid current.
inline uint64_t MainRootPage(const std::string& dir) {
  const std::string data = ReadFile(dir + "/data.mdb");
  if (data.size() < 2 * 4096) return 0;
  auto u64 = [&](size_t at) {
    uint64_t value;
    std::memcpy(&value, data.data() + at, 8);
    return value;
  };
  const size_t meta = u64(4096 + 16 + 128) > u64(16 + 128) ? 4096 : 0;
  return u64(meta + 16 + 72 + 40);
}

// The attack of issue 11: rows deleted so that the free list has pages, then the page number LMDB hands out first
// and the next one (the entry's last two) replaced by the main table's root, a live page the next write transaction
// touches: LMDB then dies on an assertion (the page is made dirty twice). Returns "" or what failed; `live` gets the page.
inline std::string ForgeFreeListOntoLivePage(const std::string& dir, const char* table, uint64_t* live) {
  std::string failed = DeleteSomeRows(dir, table);
  std::vector<uint64_t> free_list;
  uint64_t leaf = 0;
  if (failed.empty()) failed = ReadFreeListAndLivePage(dir, table, &free_list, &leaf);
  *live = MainRootPage(dir);
  if (failed.empty() && *live < 2) failed = "no main table root";
  if (failed.empty() && free_list.size() < 2) failed = "the free list has fewer than 2 pages";
  // Handed out twice in one transaction: the second time, the page is already dirty.
  if (failed.empty()) failed = PatchFreeList(dir, free_list, free_list.size() - 1, *live);
  if (failed.empty()) {
    std::vector<uint64_t> patched = free_list;
    patched.back() = *live;
    failed = PatchFreeList(dir, patched, free_list.size() - 2, *live);
  }
  return failed;
}

}  // namespace planb::testing
