#include "host/ingest/merged_check.h"

#include "host/storage/content_version.h"
#include "planb/lmdb.h"

namespace planb {

Status IsMergedIntoEveryShard(Runtime& runtime, const std::vector<std::string>& maps, std::string_view batch_id,
                              bool* merged) {
  *merged = false;
  if (maps.empty()) return Status::Ok();
  for (const std::string& map : maps) {
    std::shared_ptr<MapEnv> shard;
    Status s = runtime.OpenShard(map, &shard);
    if (s.code() == Code::kNotFound) return Status::Ok();
    PLANB_RETURN_IF_ERROR(s);
    if (shard->batches() == 0) return Status::Ok();
    Txn txn;
    PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
    bool recorded = false;
    PLANB_RETURN_IF_ERROR(IsBatchRecorded(txn.get(), shard->batches(), batch_id, &recorded).WithContext(shard->path()));
    if (!recorded) return Status::Ok();
  }
  *merged = true;
  return Status::Ok();
}

}  // namespace planb
