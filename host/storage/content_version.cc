#include "host/storage/content_version.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "host/common/hex.h"
#include "host/common/log_text.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"

namespace planb {

std::string ContentVersion::ToString() const {
  return std::to_string(batches) + " " + Hex16(digest);
}

bool ContentVersion::Parse(std::string_view text, ContentVersion* out) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos || space == 0 || text.size() - space - 1 != 16) return false;
  ContentVersion v;
  for (char c : text.substr(0, space)) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v.batches > (UINT64_MAX - digit) / 10) return false;  // would overflow
    v.batches = v.batches * 10 + digit;
  }
  for (char c : text.substr(space + 1)) {
    int nibble = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (nibble < 0) return false;
    v.digest = (v.digest << 4) | static_cast<uint64_t>(nibble);
  }
  *out = v;
  return true;
}

Status ReadContentVersion(MDB_txn* txn, MDB_dbi meta, ContentVersion* out) {
  MDB_val k = Bytes(kContentVersionKey, std::strlen(kContentVersionKey)).mdb();
  MDB_val v;
  int rc = mdb_get(txn, meta, &k, &v);
  if (rc == MDB_NOTFOUND) {
    *out = ContentVersion();
    return Status::Ok();
  }
  if (rc != MDB_SUCCESS) return LmdbStatus(rc, "reading meta content_version");
  if (!ContentVersion::Parse(Bytes(v).view(), out)) {
    return Status::Corruption("meta content_version '" + std::string(Bytes(v).view()) +
                              "' is not '<batches> <16 hex digits>'");
  }
  return Status::Ok();
}

Status RecordMergedBatch(MDB_txn* txn, MDB_dbi meta, MDB_dbi batches, std::string_view batch_id, int64_t now_ms,
                         bool* counted) {
  *counted = false;
  if (batch_id.empty()) return Status::Invalid("recording a merged batch without a batch id");
  if (batch_id.size() > 511) return Status::Invalid("batch id longer than 511 bytes (LMDB's key limit)");
  uint8_t time_be[8];
  PutU64(time_be, static_cast<uint64_t>(now_ms));
  MDB_val k = Bytes(batch_id).mdb();
  MDB_val v = Bytes(time_be, sizeof time_be).mdb();
  int rc = mdb_put(txn, batches, &k, &v, MDB_NOOVERWRITE);
  if (rc == MDB_KEYEXIST) return Status::Ok();
  if (rc != MDB_SUCCESS) return LmdbStatus(rc, "recording merged batch " + std::string(batch_id));
  ContentVersion version;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn, meta, &version));
  version.batches += 1;
  version.digest ^= XXH3_64bits(batch_id.data(), batch_id.size());
  PLANB_RETURN_IF_ERROR(WriteContentVersion(txn, meta, version));
  *counted = true;
  return Status::Ok();
}

Status WriteContentVersion(MDB_txn* txn, MDB_dbi meta, const ContentVersion& version) {
  const std::string text = version.ToString();
  MDB_val vk = Bytes(kContentVersionKey, std::strlen(kContentVersionKey)).mdb();
  MDB_val vv = Bytes(text).mdb();
  return LmdbStatus(mdb_put(txn, meta, &vk, &vv, 0), "writing meta content_version");
}

Status CarryMergedBatches(MDB_txn* from_txn, MDB_dbi from_meta, MDB_dbi from_batches, MDB_txn* to_txn,
                          MDB_dbi to_meta, MDB_dbi to_batches) {
  MDB_cursor* cursor = nullptr;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(from_txn, from_batches, &cursor), "opening table 'batches'"));
  MDB_val k, v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    const int put = mdb_put(to_txn, to_batches, &k, &v, 0);
    if (put != MDB_SUCCESS) {
      mdb_cursor_close(cursor);
      return LmdbStatus(put, "carrying the merged batches");
    }
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading table 'batches'");
  ContentVersion version;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(from_txn, from_meta, &version));
  return WriteContentVersion(to_txn, to_meta, version);
}

Status PruneMergedBatches(MDB_txn* txn, MDB_dbi meta, MDB_dbi batches,
                          const std::set<std::string, std::less<>>& keep_ids, int64_t before_ms, uint64_t* pruned) {
  (void)meta;  // the version stays: see content_version.h
  *pruned = 0;
  MDB_cursor* cursor = nullptr;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(txn, batches, &cursor), "opening table 'batches'"));
  MDB_val k, v;
  Status status;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  // After mdb_cursor_del the cursor stands on the following row, which MDB_NEXT then returns (LMDB's C_DEL).
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    const std::string_view id = Bytes(k).view();
    if (v.mv_size != 8) {
      status = Status::Corruption("table 'batches': batch " + LogValue(id) + " has a merge time of " +
                                  std::to_string(v.mv_size) + " bytes, not 8");
      break;
    }
    const int64_t merged_ms = static_cast<int64_t>(GetU64(static_cast<const uint8_t*>(v.mv_data)));
    if (merged_ms >= before_ms || keep_ids.find(id) != keep_ids.end()) continue;
    rc = mdb_cursor_del(cursor, 0);
    if (rc != MDB_SUCCESS) break;
    ++*pruned;
  }
  mdb_cursor_close(cursor);
  PLANB_RETURN_IF_ERROR(status);
  if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "pruning table 'batches'");
  return Status::Ok();
}

Status IsBatchRecorded(MDB_txn* txn, MDB_dbi batches, std::string_view batch_id, bool* recorded) {
  MDB_val key{batch_id.size(), const_cast<char*>(batch_id.data())};
  MDB_val value;
  const int rc = mdb_get(txn, batches, &key, &value);
  *recorded = rc == MDB_SUCCESS;
  if (rc == MDB_SUCCESS || rc == MDB_NOTFOUND) return Status::Ok();
  return LmdbStatus(rc, "reading the merged batches");
}

}  // namespace planb
