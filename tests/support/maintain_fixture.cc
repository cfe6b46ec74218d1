#include "support/maintain_fixture.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "host/plugin_host/map_plugins.h"
#include "host/storage/own_fields.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"

namespace planb::testing {
namespace {

// The scheme's sweep, as the host runs it after rows went (types without a scheme have nothing to sweep).
Status Sweep(const MapEnv& env, const Table& table, uint64_t* swept) {
  const MapPlugins& plugins = env.plugins();
  if (plugins.scheme() == nullptr) return Status::Ok();
  ErrorBuffer error;
  const Code code = plugins.scheme()->SweepUnusedKeys(table, plugins.type_descriptor().key_suffix_size, swept, &error);
  return code == Code::kOk ? Status::Ok() : Status::FromPlugin(code, error);
}

}  // namespace

Status RunMaintain(const std::shared_ptr<MapEnv>& env, const MaintainRequest& request, MaintainResult* result) {
  *result = MaintainResult{};
  MapTxn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env, true));
  ErrorBuffer error;
  const Code code = env->plugins().store()->Maintain(txn.table(), request, &result->stats, &error);
  if (code != Code::kOk) return Status::FromPlugin(code, error);
  PLANB_RETURN_IF_ERROR(Sweep(*env, txn.table(), &result->keys_swept));
  return txn.Commit();
}

Status DeleteRows(const std::shared_ptr<MapEnv>& env, const std::function<bool(const Row&)>& doomed, uint64_t* deleted,
                  uint64_t* keys_swept) {
  *deleted = 0;
  MapTxn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env, true));
  const Table& table = txn.table();
  const GuardedStore* store = env->plugins().store();
  ErrorBuffer error;
  MDB_val k;
  MDB_val v;
  OwnFieldValues own(env->plugins().type_descriptor());
  int rc = mdb_cursor_get(table.cursor, &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(table.cursor, &k, &v, MDB_NEXT)) {
    Row row;
    own.Attach(&row);
    Code code = store->DecodeRow(table, Bytes(k), Bytes(v), &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
    if (!doomed(row)) continue;
    code = store->DeleteRow(table, Bytes(k), Bytes(v), &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
    ++*deleted;
  }
  if (rc != MDB_NOTFOUND) return Status(Code::kIOError, mdb_strerror(rc));
  Code code = store->FinishDeletes(table, &error);
  if (code != Code::kOk) return Status::FromPlugin(code, error);
  uint64_t swept = 0;
  PLANB_RETURN_IF_ERROR(Sweep(*env, table, &swept));
  if (keys_swept != nullptr) *keys_swept = swept;
  return txn.Commit();
}

Status DumpPluginTable(const MapEnv& env, uint32_t index, bool store_table, TableEntries* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor data;
  PLANB_RETURN_IF_ERROR(data.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), data.get());
  const MDB_dbi* dbis = store_table ? table.store_tables : table.scheme_tables;
  if (dbis == nullptr) return Status(Code::kNotFound, "the map has no such tables");
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), dbis[index]));
  Bytes key;
  Bytes value;
  for (bool more = cursor.Get(MDB_FIRST, &key, &value); more; more = cursor.Get(MDB_NEXT, &key, &value)) {
    out->emplace_back(std::string(key.view()), std::string(value.view()));
  }
  return Status::Ok();
}

std::string SchemeTableProblems(const MapEnv& env) {
  const MapPlugins& plugins = env.plugins();
  if (plugins.scheme() == nullptr) return "";
  const std::string scheme = plugins.scheme_descriptor()->name;
  const bool id_scheme = scheme == "lookup_table" || scheme == "variable";
  const uint32_t own_tables = id_scheme ? 2 : 0;
  const bool dedup = plugins.scheme_tables_in_use() == own_tables + 2;
  const bool has_values = std::string(plugins.type_descriptor().name) != "session";
  std::string problems;

  // What the rows say: (id, key) of every key in id form; references held per value.
  std::set<std::pair<std::string, std::string>> row_ids;
  std::map<std::string, uint64_t> refs;
  {
    Txn txn;
    Cursor cursor;
    Status s = txn.Begin(env.env(), MDB_RDONLY);
    if (s.ok()) s = cursor.Open(txn.get(), env.data());
    if (!s.ok()) return s.message();
    const Table table = env.MakeTable(txn.get(), cursor.get());
    MDB_val k;
    MDB_val v;
    for (int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
      Bytes key;
      uint32_t prefix_size = 0;
      uint32_t stored_key_size = 0;
      ErrorBuffer error;
      if (plugins.scheme()->DecodeRow(table, Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, &error) !=
          Code::kOk) {
        return std::string("a row does not decode: ") + error.message;
      }
      const auto* lmdb_key = static_cast<const char*>(k.mv_data);
      if (scheme == "lookup_table") row_ids.emplace(std::string(lmdb_key, 4), std::string(key.view()));
      if (scheme == "variable" && lmdb_key[0] == 1)
        row_ids.emplace(std::string(lmdb_key + 1, 4), std::string(key.view()));
      // stored key + head: State's is its 16-byte version and the value type (plugins/state), Temporal State's a
      // hash of the value and the type (plugins/temporal), others' the type.
      const std::string& type = plugins.config().type;
      const size_t skip = stored_key_size + (type == "state" ? 17 : type == "temporal" ? 9 : 1);
      if (dedup && has_values && v.mv_size > skip && static_cast<const uint8_t*>(v.mv_data)[skip] == 0x01) {
        ++refs[std::string(static_cast<const char*>(v.mv_data) + skip + 1, 10)];
      }
    }
  }

  if (id_scheme) {
    TableEntries ids;
    TableEntries index;
    Status s = DumpPluginTable(env, 1, false, &ids);
    if (s.ok()) s = DumpPluginTable(env, 0, false, &index);
    if (!s.ok()) return s.message();
    std::set<std::pair<std::string, std::string>> table_ids;
    uint64_t greatest_id = 0;
    bool any_id = false;
    uint64_t counter = 0;
    for (const auto& [key, value] : ids) {
      if (key == "n") {
        counter = value.size() == 8 ? GetU64(reinterpret_cast<const uint8_t*>(value.data())) : 0;
        continue;
      }
      table_ids.emplace(key, value);
      greatest_id = std::max<uint64_t>(greatest_id, GetU32(reinterpret_cast<const uint8_t*>(key.data())));
      any_id = true;
    }
    if (table_ids != row_ids) {
      problems += "ids holds " + std::to_string(table_ids.size()) + " (id, key) entries, rows use " +
                  std::to_string(row_ids.size()) + " others or more\n";
    }
    if (any_id && counter <= greatest_id) problems += "the id counter is not above every id\n";
    std::set<std::pair<std::string, std::string>> indexed;
    std::map<std::string, std::vector<uint32_t>> clashes;  // hash -> clash numbers
    for (const auto& [key, value] : index) {
      if (value.size() < 4 || key.size() < 3) {
        problems += "a malformed index entry\n";
        continue;
      }
      indexed.emplace(value.substr(0, 4), value.substr(4));
      clashes[key.substr(0, key.size() - 2)].push_back(
          GetU16(reinterpret_cast<const uint8_t*>(key.data() + key.size() - 2)));
    }
    if (indexed != table_ids) problems += "the index and ids disagree\n";
    for (const auto& [hash, numbers] : clashes) {
      for (size_t i = 0; i < numbers.size(); ++i) {
        if (numbers[i] != i) {
          problems += "the index's clash numbers of a hash are not dense\n";
          break;
        }
      }
    }
  }

  if (dedup) {
    TableEntries values;
    TableEntries counts;
    Status s = DumpPluginTable(env, own_tables, false, &values);
    if (s.ok()) s = DumpPluginTable(env, own_tables + 1, false, &counts);
    if (!s.ok()) return s.message();
    std::map<std::string, uint64_t> table_refs;
    for (const auto& [key, value] : counts) {
      const uint64_t count = value.size() == 8 ? GetU64(reinterpret_cast<const uint8_t*>(value.data())) : 0;
      if (count != 0) table_refs[key] = count;
    }
    if (table_refs != refs) {
      problems += "value_refs counts " + std::to_string(table_refs.size()) + " referenced values, rows reference " +
                  std::to_string(refs.size()) + " (or the counts differ)\n";
    }
    if (values.size() != counts.size()) problems += "values and value_refs have different entries\n";
    // A count of 0 stays only below a live greater clash number of the same hash (value_table.h).
    for (size_t i = 0; i < counts.size(); ++i) {
      const auto& [key, value] = counts[i];
      const bool zero = value.size() == 8 && GetU64(reinterpret_cast<const uint8_t*>(value.data())) == 0;
      const bool later_same_hash = i + 1 < counts.size() && counts[i + 1].first.compare(0, 8, key, 0, 8) == 0;
      if (zero && !later_same_hash) problems += "a value with no reference was left in the value table\n";
    }
  }
  return problems;
}

}  // namespace planb::testing
