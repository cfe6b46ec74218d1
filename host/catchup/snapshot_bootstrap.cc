#include "host/catchup/snapshot_bootstrap.h"

#include <unistd.h>

#include <vector>

#include "host/common/file_util.h"
#include "host/snapshot/snapshot_fetcher.h"
#include "host/storage/lmdb_verifier.h"
#include "host/transfer/batch_zip.h"
#include "host/transfer/token.h"

namespace planb {

Status BootstrapFromPeer(Runtime& runtime, zmq::context_t& context, const std::string& peer, const std::string& map,
                         const std::atomic<bool>& stop, bool* installed, ContentVersion* version) {
  *installed = false;
  *version = ContentVersion();
  const MapConfig* config = runtime.config().FindMap(map);
  if (config == nullptr) return Status::NotFound("no map " + map + " in the config");
  const std::string scratch = runtime.home().receive() + "/bootstrap-" + Token::Random().Shown();
  const std::string zip = scratch + ".zip";
  // Only this peer: the node that said it has the batches this node cannot fetch one by one.
  ClusterConfig only_peer = runtime.config().cluster;
  only_peer.node_list = {peer};
  const auto check = [&](const std::string& zip_path, const FetchOutcome&) {
    UnzipLimits limits;
    limits.max_total_bytes = config->max_store_size;  // a copy of a shard is no larger than one
    std::vector<std::string> maps;
    Status status = UnzipBatch(zip_path, scratch, limits, &maps);
    if (status.ok() && (maps.size() != 1 || maps[0] != map)) {
      status = Status::Invalid("the snapshot holds other maps than " + map);
    }
    if (status.ok()) status = VerifyExtractedBatch(runtime.catalog(), zip_path, scratch, maps);
    if (!status.ok()) (void)RemoveTree(scratch);
    return status;
  };
  FetchOutcome outcome;
  Status status = FetchSnapshot(context, only_peer, map, ContentVersion(), zip, &outcome, {}, check);
  ::unlink(zip.c_str());
  if (status.ok()) {
    FileLock merging;
    bool locked = false;
    status = merging.AcquireUnless(runtime.home().merging() + "/.lock", &stop, &locked);
    std::shared_ptr<MapEnv> shard;
    const Status opened = status.ok() && locked ? runtime.OpenShard(map, &shard) : status;
    shard.reset();
    if (status.ok() && !locked) {
      // stopping: nothing installed; the next start's catch-up tries again
    } else if (status.ok() && opened.code() != Code::kNotFound) {
      status = opened;  // a shard appeared meanwhile (OK: installed stays false), or it does not open
    } else if (status.ok()) {
      const std::string target = runtime.home().ShardPath(map);
      status = RemoveTree(target);  // an empty directory left by a crash, at most
      if (status.ok()) status = DurableRename(scratch + "/" + map, target);
      if (status.ok()) status = ApplyHomeMode(target);
      if (status.ok()) status = ApplyHomeMode(target + "/data.mdb");
      if (status.ok()) status = SyncPath(target);
      *installed = status.ok();
      *version = outcome.version;
    }
  }
  const Status removed = RemoveTree(scratch);
  return status.ok() ? removed : status;
}

}  // namespace planb
