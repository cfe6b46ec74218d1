#include "host/storage/map_reader.h"

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
  return Status::Ok();
}

Status MapReader::Refresh() {
  txn_.Reset();
  PLANB_RETURN_IF_ERROR(txn_.Renew().WithContext(env_->path()));
  return LmdbStatus(mdb_cursor_renew(txn_.get(), cursor_.get()), "renewing cursor").WithContext(env_->path());
}

}  // namespace planb
