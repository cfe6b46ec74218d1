#include "support/ranged_fixture.h"

#include "support/map_fixture.h"

namespace planb::testing {

RangeInput Span(int64_t from, int64_t to, std::string value, int64_t time_ms) {
  RangeInput input;
  input.from = std::to_string(from);
  input.to = std::to_string(to);
  input.value = std::move(value);
  input.time_ms = time_ms;
  return input;
}

RangeInput Point(int64_t key, std::string value, int64_t time_ms) {
  RangeInput input;
  input.from = std::to_string(key);
  input.value = std::move(value);
  input.time_ms = time_ms;
  input.as_key = true;
  return input;
}

Record RangeRecord(const RangeInput& input) {
  Record record;
  record.kind = RecordKind::kReference;
  if (input.as_key) {
    record.has_key = true;
    record.key = Bytes(input.from);
  } else {
    record.has_range = true;
    record.range_from = Bytes(input.from);
    record.range_to = Bytes(input.to);
  }
  record.time_given = true;
  record.time_ms = input.time_ms;
  record.has_value = true;
  record.value_type = input.type;
  record.value = Bytes(input.value);
  return record;
}

Status PutRanges(const std::shared_ptr<MapEnv>& env, const std::vector<RangeInput>& inputs) {
  MapTxn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env, true));
  for (const RangeInput& input : inputs) {
    ErrorBuffer error;
    const Code code = env->plugins().store()->Put(txn.table(), RangeRecord(input), &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
  }
  return txn.Commit();
}

void PrintTo(const RangedRow& row, std::ostream* os) {
  *os << "{[" << row.from << ", " << row.to << "] @" << row.time_ms << " type " << static_cast<int>(row.type) << " '"
      << row.value << "'}";
}

Status DumpRanged(const MapEnv& env, std::vector<RangedRow>* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), cursor.get());
  Bytes key;
  Bytes value;
  for (bool more = cursor.Get(MDB_FIRST, &key, &value); more; more = cursor.Get(MDB_NEXT, &key, &value)) {
    Row row;
    ErrorBuffer error;
    const Code code = env.plugins().store()->DecodeRow(table, key, value, &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
    out->push_back(RangedRow{row.range_from, row.range_to, row.effective_time_ms, row.value_type,
                             std::string(row.value.view()), std::string(key.view())});
  }
  return Status::Ok();
}

Status DumpStoreTable(const MapEnv& env, size_t index, std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
  if (index >= env.plugins().type_descriptor().table_count) return Status::Invalid("no such store table");
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  const MDB_dbi dbi = env.MakeTable(txn.get(), nullptr).store_tables[index];
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), dbi));
  Bytes key;
  Bytes value;
  for (bool more = cursor.Get(MDB_FIRST, &key, &value); more; more = cursor.Get(MDB_NEXT, &key, &value)) {
    out->emplace_back(std::string(key.view()), std::string(value.view()));
  }
  return Status::Ok();
}

Status StoreTableBytes(const MapEnv& env, size_t index, uint64_t* bytes) {
  *bytes = 0;
  if (index >= env.plugins().type_descriptor().table_count) return Status::Invalid("no such store table");
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  const MDB_dbi dbi = env.MakeTable(txn.get(), nullptr).store_tables[index];
  MDB_stat stat;
  const int rc = mdb_stat(txn.get(), dbi, &stat);
  if (rc != MDB_SUCCESS) return Status::IOError(std::string("mdb_stat: ") + mdb_strerror(rc));
  *bytes = uint64_t{stat.ms_psize} * (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages);
  return Status::Ok();
}

void PrintTo(const RangedHit& hit, std::ostream* os) {
  if (hit.code != Code::kOk) {
    *os << "{" << CodeName(hit.code) << "}";
    return;
  }
  *os << "{[" << hit.from << ", " << hit.to << "] @" << hit.time_ms << " '" << hit.value << "'}";
}

RangedHit LookupRange(const MapEnv& env, int64_t number, int64_t time_ms) {
  RangedHit hit;
  Txn txn;
  Cursor cursor;
  if (!txn.Begin(env.env(), MDB_RDONLY).ok() || !cursor.Open(txn.get(), env.data()).ok()) {
    hit.code = Code::kIOError;
    return hit;
  }
  LookupKey lookup;
  lookup.number = number;
  lookup.time_ms = time_ms;
  Row row;
  ErrorBuffer error;
  hit.code = env.plugins().store()->Get(env.MakeTable(txn.get(), cursor.get()), lookup, &row, &error);
  if (hit.code == Code::kOk) {
    hit.from = row.range_from;
    hit.to = row.range_to;
    hit.time_ms = row.effective_time_ms;
    hit.value = std::string(row.value.view());
  } else if (hit.code != Code::kNotFound) {
    hit.value = error.message;
  }
  return hit;
}

void RangeModel::Add(int64_t from, int64_t to, int64_t time_ms, const std::string& value) {
  rows_[{{from, to}, time_ms}] = value;
}

RangedHit RangeModel::Lookup(int64_t number, int64_t time_ms) const {
  RangedHit best;
  for (const auto& [key, value] : rows_) {
    const auto [from, to] = key.first;
    const int64_t time = key.second;
    if (number < from || number > to || time > time_ms) continue;
    if (best.code == Code::kOk) {
      // Widths as 128-bit numbers: [INT64_MIN, INT64_MAX] does not fit 64 signed bits.
      const __int128 width = static_cast<__int128>(to) - from;
      const __int128 best_width = static_cast<__int128>(best.to) - best.from;
      bool better = false;
      if (time != best.time_ms) {
        better = time > best.time_ms;
      } else if (width != best_width) {
        better = width < best_width;
      } else if (from != best.from) {
        better = from > best.from;
      } else {
        better = to < best.to;
      }
      if (!better) continue;
    }
    best.code = Code::kOk;
    best.from = from;
    best.to = to;
    best.time_ms = time;
    best.value = value;
  }
  return best;
}

}  // namespace planb::testing
