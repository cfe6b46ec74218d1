#include "host/maintain/maintenance_marks.h"

#include <charconv>
#include <cstring>
#include <string>

#include "planb/lmdb.h"

namespace planb {

namespace {

Status ReadMark(MDB_txn* txn, MDB_dbi meta, const char* key, std::optional<int64_t>* out) {
  MDB_val k{std::strlen(key), const_cast<char*>(key)};
  MDB_val v;
  const int rc = mdb_get(txn, meta, &k, &v);
  if (rc == MDB_NOTFOUND) {
    out->reset();
    return Status::Ok();
  }
  PLANB_RETURN_IF_ERROR(LmdbStatus(rc, std::string("reading meta ") + key));
  const char* begin = static_cast<const char*>(v.mv_data);
  const char* end = begin + v.mv_size;
  int64_t ms = 0;
  const auto parsed = std::from_chars(begin, end, ms);
  if (parsed.ec != std::errc() || parsed.ptr != end) {
    return Status::Corruption(std::string("meta ") + key + " is not a time in ms");
  }
  *out = ms;
  return Status::Ok();
}

}  // namespace

Status ReadMaintenanceMarks(MDB_txn* txn, MDB_dbi meta, MaintenanceMarks* out) {
  PLANB_RETURN_IF_ERROR(ReadMark(txn, meta, kLastCondensedKey, &out->last_condensed_ms));
  return ReadMark(txn, meta, kLastReclaimedKey, &out->last_reclaimed_ms);
}

Status WriteMaintenanceMark(MDB_txn* txn, MDB_dbi meta, const char* key, int64_t ms) {
  const std::string text = std::to_string(ms);
  MDB_val k{std::strlen(key), const_cast<char*>(key)};
  MDB_val v{text.size(), const_cast<char*>(text.data())};
  return LmdbStatus(mdb_put(txn, meta, &k, &v, 0), std::string("writing meta ") + key);
}

}  // namespace planb
