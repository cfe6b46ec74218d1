#include "host/query/map_scan.h"

#include <cstring>
#include <string_view>

#include "host/common/hex.h"
#include "host/common/read_budget.h"
#include "host/storage/own_fields.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

// Whether the map's LMDB keys are exactly its keys' bytes: the direct scheme in its "raw" layout (the store
// appends nothing, so there is no length prefix; plugins/schemes/direct_key.cc). Then keys starting with P are
// one contiguous run of LMDB keys from P on.
bool KeysAreRaw(const MapPlugins& plugins) {
  const PluginDescriptor* scheme = plugins.scheme_descriptor();
  if (scheme == nullptr || plugins.scheme() == nullptr || std::string_view(scheme->name) != "direct") return false;
  const std::string_view layout = plugins.scheme()->Layout().view();  // "raw", or "raw,value_dedup=1"
  return layout == "raw" || layout.substr(0, 4) == "raw,";
}

// Why `Key startsWith` cannot narrow a scan of this map (every scheme narrows an exact key).
std::string WhyAPrefixCannotNarrow(const MapPlugins& plugins, size_t prefix_size) {
  const PluginDescriptor* scheme = plugins.scheme_descriptor();
  if (scheme == nullptr) return "";
  if (prefix_size > kMaxLmdbKeySize) return "a Key startsWith prefix longer than an LMDB key cannot narrow";
  const std::string name = scheme->name;
  if (name == "direct") {
    return "scheme 'direct' orders the keys of " + plugins.config().type +
           " maps by length first, so Key startsWith filters every row; an exact Key narrows";
  }
  return "scheme '" + name +
         "' does not keep keys in byte order, so Key startsWith filters every row (scheme 'direct' on a state map "
         "narrows it); an exact Key narrows";
}

bool StartsWith(Bytes key, std::string_view prefix) {
  return key.size >= prefix.size() && key.view().substr(0, prefix.size()) == prefix;
}

// Cursor::Get on a cursor this scan does not own.
bool CursorGet(MDB_cursor* cursor, MDB_cursor_op op, Bytes* key, Bytes* value) {
  MDB_val k = key->mdb();
  MDB_val v{};
  if (mdb_cursor_get(cursor, &k, &v, op) != MDB_SUCCESS) return false;
  *key = Bytes(k);
  *value = Bytes(v);
  return true;
}

bool BoundsAreEmpty(const ScanBounds& b) {
  return (b.has_number_bounds && b.number_min > b.number_max) || (b.has_time_bounds && b.time_min > b.time_max) ||
         (b.has_address_bounds && std::memcmp(b.address_min, b.address_max, sizeof(b.address_min)) > 0);
}

}  // namespace

std::string ScanStats::Describe() const {
  std::string range;
  if (empty_range) {
    range = "no keys (the conditions exclude every row)";
  } else if (!has_lower && !has_upper) {
    range = not_narrowed.empty() ? "all keys (full scan)" : "all keys (full scan: " + not_narrowed + ")";
  } else {
    range = "keys " + (has_lower ? lower : std::string("start")) + " to " + (has_upper ? upper : std::string("end")) +
            " (narrowed)";
  }
  return "scan: " + range + ", rows examined: " + std::to_string(rows_examined) +
         ", rows matched: " + std::to_string(rows_matched);
}

Status ScanMap(const MapEnv& env, const ScanRequest& request, const std::function<bool(const Row&)>& on_row,
               ScanStats* stats) {
  *stats = ScanStats();
  if (BoundsAreEmpty(request.bounds)) {
    stats->empty_range = true;
    return Status::Ok();
  }
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY).WithContext(env.path()));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), env.data()).WithContext(env.path()));
  return ScanMapInTxn(env, txn.get(), cursor.get(), request,
                      [&on_row](const Row& row, Bytes, Bytes) { return on_row(row); }, stats);
}

Status ScanMapInTxn(const MapEnv& env, MDB_txn* txn, MDB_cursor* cursor_handle, const ScanRequest& request,
                    const ScanRowCallback& on_row, ScanStats* stats) {
  *stats = ScanStats();
  if (BoundsAreEmpty(request.bounds)) {
    stats->empty_range = true;
    return Status::Ok();
  }
  const Table table = env.MakeTable(txn, cursor_handle);
  const GuardedStore& store = *env.plugins().store();

  KeyRange range;
  ErrorBuffer error;
  Code code = store.ScanRange(table, request.bounds, &range, &error);
  if (code == Code::kNotFound) {
    stats->empty_range = true;
    return Status::Ok();
  }
  if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext(env.path());
  stats->has_lower = range.has_lower;
  stats->has_upper = range.has_upper;
  if (range.has_lower) stats->lower = HexString(range.lower.view().view());
  if (range.has_upper) stats->upper = HexString(range.upper.view().view());
  // The store narrows only by an exact key; a key prefix narrows here where LMDB keys are the keys.
  const bool by_prefix = !range.has_lower && !range.has_upper && !request.key_prefix.empty() &&
                         request.key_prefix.size() <= kMaxLmdbKeySize && KeysAreRaw(env.plugins());
  if (!range.has_lower && !range.has_upper && !request.key_prefix.empty() && !by_prefix) {
    stats->not_narrowed = WhyAPrefixCannotNarrow(env.plugins(), request.key_prefix.size());
  }
  if (by_prefix) {
    stats->has_lower = stats->has_upper = true;
    stats->lower = HexString(request.key_prefix);
    stats->upper = stats->lower + "ff...";
  }

  // ScanRange may have moved the cursor (schemes resolve keys with it): position it explicitly.
  Bytes key = range.has_lower ? range.lower.view() : by_prefix ? Bytes(request.key_prefix) : Bytes();
  Bytes value;
  bool more = CursorGet(cursor_handle, range.has_lower || by_prefix ? MDB_SET_RANGE : MDB_FIRST, &key, &value);
  MDB_val upper = range.upper.view().mdb();
  Row row;
  OwnFieldValues own(env.plugins().type_descriptor());
  for (; more; more = CursorGet(cursor_handle, MDB_NEXT, &key, &value)) {
    MDB_val current = key.mdb();
    if (range.has_upper && mdb_cmp(txn, env.data(), &current, &upper) > 0) break;
    if (by_prefix && !StartsWith(key, request.key_prefix)) break;  // past the run of keys with the prefix
    ++stats->rows_examined;
    // A remote READ's cap (read_budget.h), charged by the row's size too; nothing for local commands.
    PLANB_RETURN_IF_ERROR(ChargeReadRow(request.budget, uint64_t{key.size} + value.size));
    row = Row();
    own.Attach(&row);
    code = store.DecodeRow(table, key, value, &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext(env.path());
    if (request.filter && !request.filter(row)) continue;
    ++stats->rows_matched;
    if (!on_row(row, key, value)) break;
    if (request.limit != 0 && stats->rows_matched >= request.limit) break;
  }
  return Status::Ok();
}

}  // namespace planb
