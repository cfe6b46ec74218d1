#include "host/storage/lmdb_check.h"

#include <lmdb.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/common/json_value_check.h"
#include "host/storage/lmdb_pages.h"
#include "host/storage/map_env.h"
#include "host/storage/own_fields.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

// A file with many named tables is not ours, but the walk should still reach every one to judge it.
constexpr unsigned kWalkMaxDbs = 256;

Status Lmdb(int rc, const std::string& what) {
  if (rc == MDB_SUCCESS) return Status::Ok();
  // Every LMDB failure while reading a private copy means the file is bad, whatever LMDB calls it.
  Code code = rc == ENOMEM ? Code::kFull : Code::kCorruption;
  return Status(code, what + ": " + mdb_strerror(rc));
}

struct EnvCloser {
  void operator()(MDB_env* env) const { mdb_env_close(env); }
};
struct TxnAborter {
  void operator()(MDB_txn* txn) const { mdb_txn_abort(txn); }
};
struct CursorCloser {
  void operator()(MDB_cursor* cursor) const { mdb_cursor_close(cursor); }
};

// What the whole file can hold, to judge a table's own counts by.
struct FileShape {
  uint64_t pages = 0;  // last page number + 1
  uint64_t page_size = 0;
};

// A table's counts come from its (possibly forged) root record; the walk below trusts ms_entries as its bound,
// so an absurd count is refused before walking. A leaf node is at least a 2-byte offset plus an 8-byte header,
// so no leaf page holds page_size / 8 rows. (DUPFIXED sub-pages pack smaller values; Plan B has no DUPSORT
// tables, and for one the bound is left out rather than risk refusing a sound file.)
Status CheckCounts(MDB_txn* txn, MDB_dbi dbi, const MDB_stat& stat, const FileShape& shape, const std::string& table) {
  const uint64_t counts[] = {stat.ms_branch_pages, stat.ms_leaf_pages, stat.ms_overflow_pages};
  for (uint64_t count : counts) {
    if (count > shape.pages) {
      return Status::Corruption("table '" + table + "' says it uses " + std::to_string(count) +
                                " pages, more than the file's " + std::to_string(shape.pages));
    }
  }
  unsigned flags = 0;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_flags(txn, dbi, &flags), "table '" + table + "'"));
  if ((flags & MDB_DUPSORT) != 0) return Status::Ok();
  const uint64_t most = static_cast<uint64_t>(stat.ms_leaf_pages) * (shape.page_size / 8);
  if (stat.ms_entries > most) {
    return Status::Corruption("table '" + table + "' says it holds " + std::to_string(stat.ms_entries) +
                              " rows, more than its " + std::to_string(stat.ms_leaf_pages) +
                              " leaf pages can hold");
  }
  return Status::Ok();
}

// Reads every row of `dbi` and touches every byte, so that a bad page crashes here rather than in the merge.
// A walk that yields more or fewer rows than the table's own count found a broken tree (possibly a loop).
Status WalkTable(MDB_txn* txn, MDB_dbi dbi, const std::string& table, const FileShape& shape) {
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_stat(txn, dbi, &stat), "table '" + table + "'"));
  PLANB_RETURN_IF_ERROR(CheckCounts(txn, dbi, stat, shape, table));
  MDB_cursor* raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_cursor_open(txn, dbi, &raw), "table '" + table + "'"));
  std::unique_ptr<MDB_cursor, CursorCloser> cursor(raw);
  MDB_val key, value;
  uint64_t rows = 0;
  volatile unsigned char sink = 0;
  unsigned char sum = 0;
  int rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST);
  while (rc == MDB_SUCCESS) {
    if (++rows > stat.ms_entries) break;
    const auto* k = static_cast<const unsigned char*>(key.mv_data);
    const auto* v = static_cast<const unsigned char*>(value.mv_data);
    for (size_t i = 0; i < key.mv_size; ++i) sum ^= k[i];
    for (size_t i = 0; i < value.mv_size; ++i) sum += v[i];
    rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT);
  }
  sink = sum;
  (void)sink;
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return Lmdb(rc, "reading table '" + table + "'");
  if (rows != stat.ms_entries) {
    return Status::Corruption("table '" + table + "' says it holds " + std::to_string(stat.ms_entries) +
                              " rows, but a walk finds " + (rows > stat.ms_entries ? "more" : std::to_string(rows)));
  }
  return Status::Ok();
}

// Every data row through the store type's decoder: a row the merge cannot read would fail every merge of the
// batch, for ever. The plugin gets a cursor of its own (it may move it), apart from the one that walks.
Status DecodeRows(const MapEnv& env) {
  const std::string type = env.plugins().config().type;
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor walk;
  PLANB_RETURN_IF_ERROR(walk.Open(txn.get(), env.data()));
  Cursor plugin_cursor;
  PLANB_RETURN_IF_ERROR(plugin_cursor.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), plugin_cursor.get());
  const GuardedStore& store = *env.plugins().store();
  ErrorBuffer error;
  OwnFieldValues own(env.plugins().type_descriptor());
  JsonValueCheck json;
  uint64_t number = 0;
  MDB_val k, v;
  int rc = mdb_cursor_get(walk.get(), &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(walk.get(), &k, &v, MDB_NEXT)) {
    ++number;
    Row row;
    own.Attach(&row);
    error.message[0] = '\0';
    const Code code = store.DecodeRow(table, Bytes(k), Bytes(v), &row, &error);
    if (code != Code::kOk) {
      return Status::Corruption("row " + std::to_string(number) + " of the data table is not a " + type +
                                " row: " + Status::FromPlugin(code, error).message());
    }
    // Output embeds a JSON value as it is: one that is not JSON would break every document it goes into.
    std::string why;
    if (row.value_type == ValueType::kJson && !json.Check(row.value.view(), &why)) {
      return Status::Corruption("row " + std::to_string(number) + " of the data table has a JSON value that is "
                                "not JSON: " + why);
    }
  }
  if (rc != MDB_NOTFOUND) return Lmdb(rc, "reading the data table");
  return Status::Ok();
}

}  // namespace

// LMDB maps the file and trusts the meta page: pages past the end of a short file SIGBUS when touched.
// Then walks the main table (whose keys name the tables) and every table in it.
Status CheckLmdbFile(const std::string& dir) {
  MDB_env* raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_create(&raw), "creating LMDB environment"));
  std::unique_ptr<MDB_env, EnvCloser> env(raw);
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_set_maxdbs(env.get(), kWalkMaxDbs), "LMDB"));
  // The scratch copy is private to this check: read-only with no lock file is enough.
  int rc = mdb_env_open(env.get(), dir.c_str(), MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK, 0644);
  if (rc == MDB_INVALID) return Status::Corruption("not an LMDB file");
  // LMDB maps as much as the meta page's map size (or its last page) asks: only a forged one fails the mmap.
  if (rc == ENOMEM) return Status::Corruption(std::string("opening LMDB file: unusable map size (") +
                                              mdb_strerror(rc) + ")");
  PLANB_RETURN_IF_ERROR(Lmdb(rc, "opening LMDB file"));

  MDB_envinfo info;
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_info(env.get(), &info), "LMDB"));
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_stat(env.get(), &stat), "LMDB"));
  const std::string file = dir + "/data.mdb";
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return Status::IOError(file + ": " + std::strerror(errno));
  const FileShape shape{static_cast<uint64_t>(info.me_last_pgno) + 1, stat.ms_psize};
  const uint64_t needed = shape.pages * shape.page_size;
  if (static_cast<uint64_t>(st.st_size) < needed) {
    return Status::Corruption("LMDB file is truncated: " + std::to_string(st.st_size) + " bytes, but its pages need " +
                              std::to_string(needed));
  }

  MDB_txn* txn_raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_txn_begin(env.get(), nullptr, MDB_RDONLY, &txn_raw), "LMDB read transaction"));
  std::unique_ptr<MDB_txn, TxnAborter> txn(txn_raw);
  MDB_dbi main = 0;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(txn.get(), nullptr, 0, &main), "main table"));
  PLANB_RETURN_IF_ERROR(WalkTable(txn.get(), main, "(main)", shape));
  std::vector<std::string> tables;
  {
    MDB_cursor* cursor_raw = nullptr;
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_cursor_open(txn.get(), main, &cursor_raw), "main table"));
    std::unique_ptr<MDB_cursor, CursorCloser> cursor(cursor_raw);
    MDB_val key, value;
    for (rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
      tables.emplace_back(static_cast<const char*>(key.mv_data), key.mv_size);
    }
    if (rc != MDB_NOTFOUND) return Lmdb(rc, "reading the main table");
  }
  for (const std::string& table : tables) {
    if (table.find('\0') != std::string::npos) return Status::Corruption("a table name holds a NUL byte");
    MDB_dbi dbi = 0;
    // A key of the main table that is not a table gives MDB_INCOMPATIBLE: Plan B keeps no rows there.
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(txn.get(), table.c_str(), 0, &dbi), "opening table '" + table + "'"));
    PLANB_RETURN_IF_ERROR(WalkTable(txn.get(), dbi, table, shape));
  }
  // Every row read: now the pages themselves, and the free list against them.
  return CheckPages(file, txn.get(), info.me_last_txnid, shape.pages, shape.page_size);
}


Status CheckMap(const std::string& dir, const std::shared_ptr<const MapPlugins>& plugins) {
  PLANB_RETURN_IF_ERROR(CheckLmdbFile(dir));
  // Only now that every page is known to be readable: the meta and tables the config expects, then the rows.
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(
      MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags | MDB_RDONLY | MDB_NOLOCK, &env));
  return DecodeRows(*env);
}


}  // namespace planb
