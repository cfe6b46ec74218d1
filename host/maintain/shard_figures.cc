#include "host/maintain/shard_figures.h"

#include "planb/lmdb.h"

namespace planb {

Status MeasureShardFigures(Runtime& runtime, const std::string& map, ShardFigures* out) {
  std::shared_ptr<MapEnv> shard;
  PLANB_RETURN_IF_ERROR(runtime.OpenShard(map, &shard));
  PLANB_RETURN_IF_ERROR(MeasureShard(*shard, &out->space).WithContext(shard->path()));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
  PLANB_RETURN_IF_ERROR(ReadMaintenanceMarks(txn.get(), shard->meta(), &out->marks).WithContext(shard->path()));
  return ReadContentVersion(txn.get(), shard->meta(), &out->version).WithContext(shard->path());
}

}  // namespace planb
