#include "host/storage/map_reader.h"

#include "host/common/read_budget.h"

namespace planb {

MapReader::~MapReader() {
  cursor_.Close();  // before the transaction it belongs to
  txn_.Abort();
}

Status MapReader::Open(std::shared_ptr<MapEnv> env) {
  cursor_.Close();
  txn_.Abort();
  env_ = std::move(env);
  PLANB_RETURN_IF_ERROR(txn_.Begin(env_->env(), MDB_RDONLY).WithContext(env_->path()));
  PLANB_RETURN_IF_ERROR(cursor_.Open(txn_.get(), env_->data()).WithContext(env_->path()));
  table_ = env_->MakeTable(txn_.get(), cursor_.get());
  memo_ = SnapshotMemo();
  table_.memo = &memo_;
  own_.Size(env_->plugins().type_descriptor());
  return Status::Ok();
}

Status MapReader::Refresh() {
  txn_.Reset();
  memo_.filled = false;
  PLANB_RETURN_IF_ERROR(txn_.Renew().WithContext(env_->path()));
  return LmdbStatus(mdb_cursor_renew(txn_.get(), cursor_.get()), "renewing cursor").WithContext(env_->path());
}

Status MapReader::HasAnyRowOf(Bytes key, bool* any, ReadBudget* budget) const {
  *any = false;
  const GuardedStore& store = *env_->plugins().store();
  ScanBounds bounds;
  bounds.has_key = true;
  bounds.key = key;
  KeyRange range;
  ErrorBuffer error;
  Code code = store.ScanRange(table_, bounds, &range, &error);
  if (code == Code::kNotFound) return Status::Ok();  // the scheme knows no row of the key
  if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext(env_->path());
  if (!range.has_lower || !range.has_upper) {
    return Status::Invalid(env_->path() + ": the store type does not narrow rows by key");
  }
  // The range may hold other keys' rows (a hashed prefix they share): each row's decoded key decides.
  MDB_val k = range.lower.view().mdb();
  MDB_val v;
  MDB_val upper = range.upper.view().mdb();
  int rc = mdb_cursor_get(table_.cursor, &k, &v, MDB_SET_RANGE);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(table_.cursor, &k, &v, MDB_NEXT)) {
    if (mdb_cmp(table_.txn, table_.dbi, &k, &upper) > 0) return Status::Ok();
    PLANB_RETURN_IF_ERROR(ChargeReadRow(budget, uint64_t{k.mv_size} + v.mv_size));
    Row row;
    own_.Attach(&row);
    code = store.DecodeRow(table_, Bytes(k), Bytes(v), &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext(env_->path());
    if (row.key.view() == key.view()) {
      *any = true;
      return Status::Ok();
    }
  }
  if (rc == MDB_NOTFOUND) return Status::Ok();
  return LmdbStatus(rc, "reading rows of a key").WithContext(env_->path());
}

}  // namespace planb
