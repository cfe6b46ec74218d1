#include "host/storage/shard_space.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "planb/lmdb.h"

namespace planb {
namespace {

constexpr uint64_t kMetaPages = 2;
// liblmdb 0.9: dbi 0 is the free list (FREE_DBI), dbi 1 the main table (MAIN_DBI); both always valid in a txn.
constexpr MDB_dbi kFreeDbi = 0;
constexpr MDB_dbi kMainDbi = 1;
// A named table's record in the main table is its MDB_db (48 bytes): pad u32, flags u16, depth u16, then branch,
// leaf and overflow page counts, entries, root (u64 each). On-disk format of LMDB, as lmdb_pages.cc reads it.
constexpr size_t kDbSize = 48;
constexpr size_t kDbBranchPages = 8;

uint64_t Load64(const void* at) {
  uint64_t value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

uint64_t TreePages(const MDB_stat& stat) { return stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages; }

// Pages of the main table's records that are tables: their trees' branch, leaf and overflow pages.
Status NamedTablePages(MDB_txn* txn, uint64_t* pages) {
  *pages = 0;
  MDB_cursor* cursor = nullptr;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(txn, kMainDbi, &cursor), "opening the main table"));
  MDB_val key, value;
  int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    // Plan B keeps only tables in the main table; a plain record (none today) holds no pages of its own.
    if (value.mv_size != kDbSize) continue;
    const auto* db = static_cast<const uint8_t*>(value.mv_data);
    for (size_t i = 0; i < 3; ++i) *pages += Load64(db + kDbBranchPages + 8 * i);
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading the main table");
  return Status::Ok();
}

// Each free list value is an IDL: a count, then that many page numbers.
Status ListedFreePages(MDB_txn* txn, uint64_t* pages) {
  *pages = 0;
  MDB_cursor* cursor = nullptr;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(txn, kFreeDbi, &cursor), "opening the free list"));
  MDB_val key, value;
  int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (value.mv_size >= 8) *pages += Load64(value.mv_data);
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading the free list");
  return Status::Ok();
}

}  // namespace

Status MeasureShard(const MapEnv& env, ShardSpace* out) {
  *out = ShardSpace();
  const std::string& path = env.path();
  int fd = -1;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_get_fd(env.env(), &fd), path));
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError(path + "/data.mdb: " + std::strerror(errno));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(path));
  MDB_envinfo info;
  MDB_stat free_stat, main_stat, data_stat;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(env.env(), &info), path));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_stat(txn.get(), kFreeDbi, &free_stat), path + ": free list"));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_stat(txn.get(), kMainDbi, &main_stat), path + ": main table"));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_stat(txn.get(), env.data(), &data_stat), path + ": data table"));
  uint64_t named = 0;
  PLANB_RETURN_IF_ERROR(NamedTablePages(txn.get(), &named).WithContext(path));
  PLANB_RETURN_IF_ERROR(ListedFreePages(txn.get(), &out->listed_free_pages).WithContext(path));
  // mdb_env_info reads the newest meta, which a writer may have moved past this transaction: the transaction's
  // own view is what the trees above describe. The file only grows, so a later last page is still inside it.
  out->rows = data_stat.ms_entries;
  out->file_bytes = static_cast<uint64_t>(st.st_size);
  out->page_size = free_stat.ms_psize;
  out->last_page = info.me_last_pgno;
  out->used_pages = kMetaPages + TreePages(free_stat) + TreePages(main_stat) + named;
  out->file_pages = std::max<uint64_t>(out->file_bytes / out->page_size, out->last_page + 1);
  if (out->used_pages > out->file_pages) out->used_pages = out->file_pages;  // a writer moved on meanwhile
  out->free_share =
      out->file_pages == 0 ? 0.0 : static_cast<double>(out->file_pages - out->used_pages) / out->file_pages;
  return Status::Ok();
}

}  // namespace planb
