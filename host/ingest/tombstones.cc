#include "host/ingest/tombstones.h"

#include <xxhash.h>

#include <limits>

#include "host/common/log_text.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"

namespace planb {

int64_t RowTimeMs(const PluginDescriptor& type, const Row& row) {
  for (uint32_t i = 0; i < type.field_count; ++i) {
    if (type.fields[i].field == RowField::kEnd) return row.session_end_ms;
  }
  return row.effective_time_ms;
}

bool OutranksReplacement(const Tombstone& a, int64_t time_ms, const std::string& batch_id) {
  return a.replacement && (a.entry.time_ms > time_ms || (a.entry.time_ms == time_ms && a.batch_id > batch_id));
}

int64_t ReplacementTombstoneTime(int64_t latest_row_ms) {
  return latest_row_ms == std::numeric_limits<int64_t>::max() ? latest_row_ms : latest_row_ms + 1;
}

Status OpenTombstones(MDB_txn* txn, bool create, MDB_dbi* dbi, bool* found) {
  const int rc = mdb_dbi_open(txn, kTombstonesTableName, create ? MDB_CREATE : 0, dbi);
  *found = rc == MDB_SUCCESS;
  if (rc == MDB_NOTFOUND && !create) return Status::Ok();
  if (rc == MDB_INCOMPATIBLE) return Status::Corruption("table 'tombstones' is not a Plan B table");
  return LmdbStatus(rc, "opening table 'tombstones'");
}

Status RecordTombstone(MDB_txn* txn, MDB_dbi dbi, const Tombstone& tombstone) {
  std::string value(8, '\0');
  PutU64(reinterpret_cast<uint8_t*>(value.data()), static_cast<uint64_t>(tombstone.merged_ms));
  value += tombstone.replacement ? 'r' : 'd';
  value += DeleteEntryText(tombstone.entry);
  MDB_val k = Bytes(tombstone.batch_id).mdb();
  MDB_val v = Bytes(value).mdb();
  return LmdbStatus(mdb_put(txn, dbi, &k, &v, 0), "recording the tombstone of batch " + LogValue(tombstone.batch_id));
}

Status ReadShardTombstones(MDB_env* shard, std::vector<Tombstone>* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard, MDB_RDONLY));
  MDB_dbi dbi = 0;
  const int rc = mdb_dbi_open(txn.get(), kTombstonesTableName, 0, &dbi);
  if (rc == MDB_NOTFOUND) return Status::Ok();
  PLANB_RETURN_IF_ERROR(LmdbStatus(rc, "opening table 'tombstones'"));
  return ReadTombstones(txn.get(), dbi, out);
}

namespace {
Status DecodeTombstone(const MDB_val& k, const MDB_val& v, Tombstone* out) {
  out->batch_id.assign(static_cast<const char*>(k.mv_data), k.mv_size);
  if (v.mv_size < 9) {
    return Status::Corruption("tombstone of batch " + LogValue(out->batch_id) + ": " + std::to_string(v.mv_size) +
                              " bytes, shorter than its merge time and kind");
  }
  const auto* data = static_cast<const uint8_t*>(v.mv_data);
  out->merged_ms = static_cast<int64_t>(GetU64(data));
  if (data[8] != 'd' && data[8] != 'r') {
    return Status::Corruption("tombstone of batch " + LogValue(out->batch_id) + ": kind " +
                              LogValue(std::string_view(reinterpret_cast<const char*>(data + 8), 1)) +
                              ", not 'd' or 'r'");
  }
  out->replacement = data[8] == 'r';
  Status parsed = ParseDeleteEntry(std::string_view(reinterpret_cast<const char*>(data + 9), v.mv_size - 9),
                                   &out->entry);
  if (!parsed.ok()) {
    return Status::Corruption("tombstone of batch " + LogValue(out->batch_id) + ": " + parsed.message());
  }
  return Status::Ok();
}
}  // namespace

Status ReadTombstones(MDB_txn* txn, MDB_dbi dbi, std::vector<Tombstone>* out) {
  out->clear();
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, dbi));
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    if (rc != MDB_SUCCESS) return LmdbStatus(rc, "reading table 'tombstones'");
    Tombstone tombstone;
    PLANB_RETURN_IF_ERROR(DecodeTombstone(k, v, &tombstone));
    out->push_back(std::move(tombstone));
  }
  return Status::Ok();
}

Status PruneTombstones(MDB_txn* txn, MDB_dbi dbi, int64_t before_ms, uint64_t* pruned) {
  *pruned = 0;
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, dbi));
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    if (rc != MDB_SUCCESS) return LmdbStatus(rc, "reading table 'tombstones'");
    Tombstone tombstone;
    PLANB_RETURN_IF_ERROR(DecodeTombstone(k, v, &tombstone));
    if (tombstone.merged_ms >= before_ms) continue;
    PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_del(cursor.get(), 0), "pruning table 'tombstones'"));
    ++*pruned;
  }
  return Status::Ok();
}

namespace {
std::string IdentityKey(const std::string& identity) {
  const XXH128_hash_t h = XXH3_128bits(identity.data(), identity.size());
  uint8_t key[16];
  PutU64(key, h.high64);
  PutU64(key + 8, h.low64);
  return std::string(reinterpret_cast<const char*>(key), 16);
}
}  // namespace

Status OpenShadowed(MDB_txn* txn, bool create, MDB_dbi* dbi, bool* found) {
  const int rc = mdb_dbi_open(txn, kShadowedTableName, create ? MDB_CREATE : 0, dbi);
  *found = rc == MDB_SUCCESS;
  if (rc == MDB_NOTFOUND && !create) return Status::Ok();
  if (rc == MDB_INCOMPATIBLE) return Status::Corruption("table 'shadowed' is not a Plan B table");
  return LmdbStatus(rc, "opening table 'shadowed'");
}

Status ShadowedVersion(MDB_txn* txn, MDB_dbi dbi, const std::string& identity, RowVersion* version, bool* found) {
  const std::string key = IdentityKey(identity);
  MDB_val k = Bytes(key).mdb();
  MDB_val v;
  const int rc = mdb_get(txn, dbi, &k, &v);
  *found = rc == MDB_SUCCESS;
  if (rc == MDB_NOTFOUND) return Status::Ok();
  PLANB_RETURN_IF_ERROR(LmdbStatus(rc, "reading table 'shadowed'"));
  if (v.mv_size != 24) return Status::Corruption("table 'shadowed': a row of " + std::to_string(v.mv_size) + " bytes");
  const auto* data = static_cast<const uint8_t*>(v.mv_data);
  version->time_ms = static_cast<int64_t>(GetU64(data));
  version->tie = GetU64(data + 8);
  return Status::Ok();
}

Status RecordShadowed(MDB_txn* txn, MDB_dbi dbi, const std::string& identity, RowVersion version, int64_t merged_ms) {
  RowVersion old;
  bool found = false;
  PLANB_RETURN_IF_ERROR(ShadowedVersion(txn, dbi, identity, &old, &found));
  if (found && version <= old) return Status::Ok();
  uint8_t value[24];
  PutU64(value, static_cast<uint64_t>(version.time_ms));
  PutU64(value + 8, version.tie);
  PutU64(value + 16, static_cast<uint64_t>(merged_ms));
  const std::string key = IdentityKey(identity);
  MDB_val k = Bytes(key).mdb();
  MDB_val v = Bytes(value, sizeof value).mdb();
  return LmdbStatus(mdb_put(txn, dbi, &k, &v, 0), "writing table 'shadowed'");
}

namespace {
// Deletes the rows of "shadowed" that `drop` picks from their time and merge time.
template <typename Drop>
Status DropShadowed(MDB_txn* txn, MDB_dbi dbi, Drop drop, uint64_t* dropped) {
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, dbi));
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    if (rc != MDB_SUCCESS) return LmdbStatus(rc, "reading table 'shadowed'");
    if (v.mv_size != 24) return Status::Corruption("table 'shadowed': a row of " + std::to_string(v.mv_size) + " bytes");
    const auto* data = static_cast<const uint8_t*>(v.mv_data);
    if (!drop(static_cast<int64_t>(GetU64(data)), static_cast<int64_t>(GetU64(data + 16)))) continue;
    PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_del(cursor.get(), 0), "deleting from table 'shadowed'"));
    ++*dropped;
  }
  return Status::Ok();
}
}  // namespace

Status PruneShadowed(MDB_txn* txn, MDB_dbi dbi, int64_t before_ms, uint64_t* pruned) {
  *pruned = 0;
  return DropShadowed(txn, dbi, [before_ms](int64_t, int64_t merged_ms) { return merged_ms < before_ms; }, pruned);
}

Status DropShadowedBefore(MDB_txn* txn, MDB_dbi dbi, int64_t time_ms) {
  uint64_t dropped = 0;
  return DropShadowed(txn, dbi, [time_ms](int64_t row_time, int64_t) { return row_time < time_ms; }, &dropped);
}

}  // namespace planb
