#include "host/ingest/load_check.h"

#include <memory>

#include "host/common/disk_room.h"
#include "host/ingest/quarantine.h"
#include "host/storage/content_version.h"
#include "host/storage/map_full.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

using protocol::PrepareVerdict;

// The shard's size as LMDB counts it (its last used page; free pages inside are not subtracted, which errs on
// the safe side) and its content version.
Status ShardUse(const MapEnv& shard, uint64_t* used, ContentVersion* version) {
  MDB_envinfo info;
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(shard.env(), &info), "reading LMDB environment info"));
  PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_env_stat(shard.env(), &stat), "reading LMDB environment stat"));
  *used = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), MDB_RDONLY));
  return ReadContentVersion(txn.get(), shard.meta(), version);
}

// A map that would take the batch but is held back behind a quarantined batch (quarantine.h): its batch would
// stay staged until an operator releases that one, so the sender hears which batch and how. The other verdicts
// come first: a map full or unknown here could not take the batch even once released. A quarantine that cannot
// be read is left to the merge, which reports it.
void MarkHeldBack(const Home& home, protocol::PrepareReply* reply) {
  std::vector<QuarantinedBatch> quarantined;
  std::vector<HeldBatch> held;
  MergeBlocks blocks;
  if (!InspectQuarantine(home, &quarantined, &held, &blocks).ok() || blocks.empty()) return;
  for (protocol::PrepareMapReply& answer : reply->maps) {
    std::string map;
    std::string by;
    if (answer.verdict != PrepareVerdict::kOk || !blocks.Blocks({answer.map}, true, &map, &by)) continue;
    std::string reason;
    for (const QuarantinedBatch& batch : quarantined) {
      if (batch.name == by) reason = batch.reason;
    }
    answer.verdict = PrepareVerdict::kHeldBack;
    answer.message = "map '" + answer.map + "' is held back behind quarantined batch " + QuarantineDir(home) + "/" +
                     by + (reason.empty() ? "" : " (" + reason + ")") +
                     ": a batch of the map would stay staged, not merged, until it is released; " +
                     QuarantineReleaseHint(home, by);
  }
}

}  // namespace

uint64_t MergeRoomNeeded(uint64_t bytes) { return SaturatingAdd(bytes, bytes / 2); }

Status CheckLoadLocally(Runtime& runtime, const protocol::PrepareRequest& request, protocol::PrepareReply* reply) {
  reply->maps.clear();
  uint64_t total = 0;
  for (const protocol::PrepareMap& need : request.maps) {
    protocol::PrepareMapReply answer;
    answer.map = need.map;
    total = SaturatingAdd(total, need.bytes);
    std::shared_ptr<const MapPlugins> plugins;
    if (!runtime.catalog().Get(need.map, &plugins).ok()) {
      answer.verdict = PrepareVerdict::kUnknownMap;
      answer.message = "map '" + need.map + "' is not configured on this node";
      reply->maps.push_back(std::move(answer));
      continue;
    }
    uint64_t used = 0;
    ContentVersion version;
    std::shared_ptr<MapEnv> shard;
    Status s = runtime.OpenShard(need.map, &shard);
    if (s.ok()) s = ShardUse(*shard, &used, &version);
    if (!s.ok() && s.code() != Code::kNotFound) {
      answer.verdict = PrepareVerdict::kShardUnusable;
      answer.message = "map '" + need.map + "': " + s.message();
      reply->maps.push_back(std::move(answer));
      continue;
    }
    answer.batches = version.batches;
    answer.digest = version.digest;
    const uint64_t limit = plugins->config().max_store_size;
    const uint64_t needed = MergeRoomNeeded(need.bytes);
    if (SaturatingAdd(used, needed) > limit) {
      answer.verdict = PrepareVerdict::kNoRoomInMap;
      answer.message = "map '" + need.map + "' would not fit in its max_store_size of " + std::to_string(limit) +
                       " bytes: the shard uses " + std::to_string(used) + " and the load adds " +
                       std::to_string(need.bytes) + " bytes of batches (about " + std::to_string(needed) +
                       " once merged); raise max_store_size in [map." + need.map + "] (now " +
                       ByteSizeText(limit) + ")";
    }
    reply->maps.push_back(std::move(answer));
  }
  // The batches are staged (zips) and extracted to merging/ before they merge: twice their size, at least, above
  // the margin every write on the node keeps (disk_room.h), so BEGIN and the extraction find the room PREPARE saw.
  const uint64_t disk_needed = SaturatingAdd(total, total);
  const DiskRoom room = MeasureDiskRoom(runtime.home().root());
  if (!room.Fits(disk_needed)) {
    for (protocol::PrepareMapReply& answer : reply->maps) {
      if (answer.verdict != PrepareVerdict::kOk) continue;
      answer.verdict = PrepareVerdict::kNoDiskSpace;
      answer.message = "disk full: the load needs about " + std::to_string(disk_needed) +
                       " bytes (its batches staged and unpacked); " + room.Describe();
    }
  }
  MarkHeldBack(runtime.home(), reply);
  return Status::Ok();
}

}  // namespace planb
