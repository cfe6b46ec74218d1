#include "host/catchup/merged_listing.h"

#include <sys/stat.h>

#include "host/catchup/batch_retention.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/storage/content_version.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"

namespace planb {

Status ListMergedBatches(Runtime& runtime, const protocol::ListMergedRequest& request, protocol::MergedList* reply) {
  *reply = protocol::MergedList();
  reply->now_ms = CurrentTimeMs();
  const MapConfig* map = runtime.config().FindMap(request.map);
  if (map == nullptr) return Status::NotFound("no map " + LogValue(request.map) + " on this node");
  std::shared_ptr<MapEnv> shard;
  Status opened = runtime.OpenShard(map->name, &shard);
  if (opened.code() == Code::kNotFound) return Status::Ok();
  PLANB_RETURN_IF_ERROR(opened);
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
  ContentVersion version;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), shard->meta(), &version).WithContext(shard->path()));
  reply->batches = version.batches;
  reply->digest = version.digest;
  if (shard->batches() == 0) return Status::Ok();
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), shard->batches()).WithContext(shard->path()));
  MDB_cursor* raw = cursor.get();
  MDB_val key = Bytes(request.after).mdb();
  MDB_val value;
  int rc = request.after.empty() ? mdb_cursor_get(raw, &key, &value, MDB_FIRST)
                                 : mdb_cursor_get(raw, &key, &value, MDB_SET_RANGE);
  if (rc == MDB_SUCCESS && !request.after.empty() && Bytes(key).view() == request.after) {
    rc = mdb_cursor_get(raw, &key, &value, MDB_NEXT);
  }
  const Home& home = runtime.home();
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(raw, &key, &value, MDB_NEXT)) {
    if (reply->ids.size() == request.limit) {
      reply->more = 1;
      break;
    }
    protocol::MergedBatch batch;
    batch.id.assign(Bytes(key).view());
    // Ids come from manifests that passed the wire's check; one that would not pass it is no peer's to fetch.
    if (!protocol::IsWireBatchId(batch.id)) continue;
    if (value.mv_size == 8) batch.merged_ms = static_cast<int64_t>(GetU64(static_cast<const uint8_t*>(value.mv_data)));
    struct stat st;
    batch.retained = ::lstat(RetainedBatchPath(home, batch.id).c_str(), &st) == 0 && S_ISREG(st.st_mode) ? 1 : 0;
    reply->ids.push_back(std::move(batch));
  }
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return LmdbStatus(rc, "listing table 'batches'").WithContext(shard->path());
  return Status::Ok();
}

}  // namespace planb
