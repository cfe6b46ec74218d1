#include "host/scheme_trial/shard_sizes.h"

#include <filesystem>

#include "planb/lmdb.h"

namespace planb {
namespace {

Status TableBytes(MDB_txn* txn, MDB_dbi dbi, const std::string& path, uint64_t* bytes, uint64_t* entries) {
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_stat(txn, dbi, &stat), "measuring a table").WithContext(path));
  *bytes = (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * uint64_t{stat.ms_psize};
  if (entries != nullptr) *entries = stat.ms_entries;
  return Status::Ok();
}

}  // namespace

Status MeasureShard(const MapEnv& env, uint32_t key_tables, ShardSizes* out) {
  *out = ShardSizes();
  std::error_code ec;
  out->file_bytes = std::filesystem::file_size(env.path() + "/data.mdb", ec);
  if (ec) return Status::IOError(env.path() + "/data.mdb: " + ec.message());
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(env.path()));
  uint64_t data_bytes = 0;
  PLANB_RETURN_IF_ERROR(TableBytes(txn.get(), env.data(), env.path(), &data_bytes, &out->rows));
  const Table table = env.MakeTable(txn.get(), nullptr);
  const uint32_t in_use = env.plugins().scheme_tables_in_use();
  for (uint32_t i = 0; i < in_use; ++i) {
    uint64_t bytes = 0;
    PLANB_RETURN_IF_ERROR(TableBytes(txn.get(), table.scheme_tables[i], env.path(), &bytes, nullptr));
    std::optional<uint64_t>& sum = i < key_tables ? out->key_table_bytes : out->value_table_bytes;
    sum = sum.value_or(0) + bytes;
  }
  return Status::Ok();
}

}  // namespace planb
