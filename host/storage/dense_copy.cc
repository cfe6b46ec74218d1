#include "host/storage/dense_copy.h"

#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

struct NamedTable {
  std::string name;
  unsigned flags = 0;
};

Status ListTables(MDB_txn* txn, std::vector<NamedTable>* out) {
  MDB_dbi main = 0;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_dbi_open(txn, nullptr, 0, &main), "opening the main table"));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, main));
  MDB_val k;
  MDB_val v;
  int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    NamedTable table;
    table.name.assign(static_cast<const char*>(k.mv_data), k.mv_size);
    MDB_dbi dbi = 0;
    const int open = mdb_dbi_open(txn, table.name.c_str(), 0, &dbi);
    if (open == MDB_INCOMPATIBLE) {
      return Status::Invalid("the main table holds a row that is not a table: '" + table.name + "'");
    }
    PLANB_RETURN_IF_ERROR(LmdbStatus(open, "opening table " + table.name));
    PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_dbi_flags(txn, dbi, &table.flags), "reading flags of " + table.name));
    out->push_back(std::move(table));
  }
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "listing tables");
  return Status::Ok();
}

Status CopyTable(MDB_txn* read, MDB_txn* write, const NamedTable& table, DenseCopyStats* stats) {
  MDB_dbi from_dbi = 0;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_dbi_open(read, table.name.c_str(), 0, &from_dbi), "opening " + table.name));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(read, from_dbi));
  const bool dupsort = (table.flags & MDB_DUPSORT) != 0;
  MDB_dbi to_dbi = 0;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_dbi_open(write, table.name.c_str(), table.flags | MDB_CREATE, &to_dbi),
                                   "creating " + table.name));
  Cursor out;
  PLANB_RETURN_IF_ERROR(out.Open(write, to_dbi));
  MDB_val k;
  MDB_val v;
  int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_put(out.get(), &k, &v, dupsort ? MDB_APPENDDUP : MDB_APPEND),
                                     "copying a row of " + table.name));
    ++stats->rows;
  }
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading " + table.name);
  ++stats->tables;
  return Status::Ok();
}

}  // namespace

Status DenseCopy(MDB_env* from, const std::string& to_dir, DenseCopyStats* stats) {
  MDB_envinfo info;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(from, &info), "reading the environment's size"));
  Txn read;
  PLANB_RETURN_IF_ERROR(read.Begin(from, MDB_RDONLY));
  std::vector<NamedTable> tables;
  PLANB_RETURN_IF_ERROR(ListTables(read.get(), &tables));
  Env to;
  Env::Options options;
  options.map_size = info.me_mapsize;
  options.max_dbs = static_cast<unsigned>(tables.size()) + 1;
  options.flags = MDB_NOTLS | MDB_NOSYNC;
  PLANB_RETURN_IF_ERROR(to.Open(to_dir, options).WithContext(to_dir));
  // One write transaction: pages written once are never copied again, so the copy holds no free page (commits
  // in between would free the main table's and the free list's earlier pages). LMDB spills dirty pages of a
  // large transaction to the file as it goes.
  Txn write;
  PLANB_RETURN_IF_ERROR(write.Begin(to.get(), 0).WithContext(to_dir));
  for (const NamedTable& table : tables) {
    PLANB_RETURN_IF_ERROR(CopyTable(read.get(), write.get(), table, stats).WithContext(to_dir));
  }
  PLANB_RETURN_IF_ERROR(write.Commit().WithContext(to_dir));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_sync(to.get(), 1), "syncing").WithContext(to_dir));
  to.Close();
  return SyncPath(to_dir);
}

}  // namespace planb
