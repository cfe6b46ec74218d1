#include "host/catchup/peer_catch_up.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "host/common/log_text.h"
#include "host/catchup/snapshot_bootstrap.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/snapshot/snapshot_fetcher.h"
#include "host/storage/content_version.h"
#include "host/transfer/batch_zip.h"
#include "host/transfer/request_channel.h"
#include "host/transfer/token.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

using Clock = RequestChannel::Clock;

// The ids of `ids` recorded in `map`'s shard (one read transaction); none when it has no shard.
Status RecordedHere(Runtime& runtime, const std::string& map, const std::vector<protocol::MergedBatch>& ids,
                    std::set<std::string>* recorded, ContentVersion* version) {
  recorded->clear();
  *version = ContentVersion();
  std::shared_ptr<MapEnv> shard;
  Status opened = runtime.OpenShard(map, &shard);
  if (opened.code() == Code::kNotFound) return Status::Ok();
  PLANB_RETURN_IF_ERROR(opened);
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), shard->meta(), version).WithContext(shard->path()));
  if (shard->batches() == 0) return Status::Ok();
  for (const protocol::MergedBatch& id : ids) {
    bool found = false;
    PLANB_RETURN_IF_ERROR(IsBatchRecorded(txn.get(), shard->batches(), id.id, &found).WithContext(shard->path()));
    if (found) recorded->insert(id.id);
  }
  return Status::Ok();
}

}  // namespace

PeerCatchUp::PeerCatchUp(Runtime& runtime, Stage stage, Log log)
    : runtime_(runtime), stage_(std::move(stage)), log_(std::move(log)) {}

bool PeerCatchUp::Behind(const std::string& map, std::string* why) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = behind_.find(map);
  if (found == behind_.end()) return false;
  *why = found->second;
  return true;
}

void PeerCatchUp::SetBehind(const std::string& map, const std::string& why) {
  std::string before;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = behind_.find(map);
    if (found != behind_.end()) before = found->second;
    if (why.empty()) {
      behind_.erase(map);
    } else {
      behind_[map] = why;
    }
  }
  if (before.empty() && !why.empty()) {
    log_("catch-up: behind on map " + map + ": " + why + "; remote reads and snapshots of it are refused (readers "
         "use another node) until those batches are merged here");
  } else if (!before.empty() && why.empty()) {
    log_("catch-up: caught up on map " + map + "; serving its remote reads and snapshots again");
  }
}

void PeerCatchUp::RefreshLocalIds() {
  const Home& home = runtime_.home();
  std::vector<std::string> paths;
  std::vector<StagedBatch> staged;
  if (StagingStore(home).List(&staged).ok()) {
    for (const StagedBatch& batch : staged) paths.push_back(batch.path);
  }
  std::vector<QuarantinedBatch> quarantined;
  if (ListQuarantine(home, &quarantined).ok()) {
    for (const QuarantinedBatch& batch : quarantined) paths.push_back(QuarantineDir(home) + "/" + batch.name);
  }
  std::map<std::string, std::string> now;
  UnzipLimits limits{runtime_.config().cluster.max_batch_size};
  limits.allow_deletes = true;
  for (const std::string& path : paths) {
    const auto known = id_of_file_.find(path);
    if (known != id_of_file_.end()) {
      now.insert(*known);
      continue;
    }
    std::string id;
    // A zip that does not read has no id to compare: a fetch of a batch it may hold only stages it again, which
    // its merge recognises.
    if (ReadBatchId(path, limits, &id, nullptr).ok()) now.emplace(path, id);
  }
  id_of_file_ = std::move(now);
  local_ids_.clear();
  for (const auto& entry : id_of_file_) local_ids_.insert(entry.second);
}

Status PeerCatchUp::AskList(const std::string& peer, const protocol::ListMergedRequest& request,
                            protocol::MergedList* reply) {
  const ClusterConfig& cluster = runtime_.config().cluster;
  try {
    RequestChannel channel(context_, AddressOf(cluster, peer), cluster.request_timeout_ms, &next_request_id_);
    uint64_t request_id = 0;
    if (!channel.Send(protocol::Command::kListMerged, protocol::EncodeListMerged(request), nullptr, &request_id)) {
      return Status::IOError("timed out sending LIST_MERGED");
    }
    RequestChannel::Reply answer;
    bool timed_out = false;
    PLANB_RETURN_IF_ERROR(channel.Await(Clock::now() + std::chrono::milliseconds(cluster.request_timeout_ms),
                                        [request_id](uint64_t id) { return id == request_id; }, &answer, &timed_out));
    if (timed_out) return Status::IOError("timed out after " + std::to_string(cluster.request_timeout_ms) + " ms");
    if (answer.command == static_cast<uint16_t>(protocol::Command::kError)) {
      protocol::ErrorReply error;
      PLANB_RETURN_IF_ERROR(protocol::DecodeError(answer.payload, &error).WithContext("bad ERROR reply"));
      return Status(protocol::CodeFromWire(error.code), "LIST_MERGED refused: " + error.message);
    }
    if (answer.command != static_cast<uint16_t>(protocol::Command::kMergedList)) {
      return Status::IOError("unexpected reply " + protocol::CommandName(answer.command) + " to LIST_MERGED");
    }
    PLANB_RETURN_IF_ERROR(protocol::DecodeMergedList(answer.payload, reply).WithContext("bad MERGED_LIST"));
    if (reply->ids.size() > request.limit) {
      return Status::IOError("MERGED_LIST with " + std::to_string(reply->ids.size()) + " ids, more than the " +
                             std::to_string(request.limit) + " asked for");
    }
    // Pages go forward in id order: a peer answering otherwise would make the walk loop.
    std::string last = request.after;
    for (const protocol::MergedBatch& id : reply->ids) {
      if (!last.empty() && id.id <= last) return Status::IOError("MERGED_LIST ids not in ascending order after the asked id");
      last = id.id;
    }
    return Status::Ok();
  } catch (const zmq::error_t& e) {
    return Status::IOError(std::string("endpoint of node ") + peer + ": " + e.what());
  }
}

Status PeerCatchUp::CatchUpMap(const std::string& peer, const std::string& map, const std::atomic<bool>& stop,
                               MapPass* pass) {
  const ClusterConfig& cluster = runtime_.config().cluster;
  protocol::MergedList page;
  PLANB_RETURN_IF_ERROR(AskList(peer, {map, "", 1}, &page));
  std::set<std::string> recorded;
  ContentVersion own;
  PLANB_RETURN_IF_ERROR(RecordedHere(runtime_, map, {}, &recorded, &own));
  if (own == ContentVersion{page.batches, page.digest}) return Status::Ok();
  const bool own_empty = own.empty();
  const uint64_t peer_batches = page.batches;
  uint64_t listed = 0;
  std::vector<std::pair<int64_t, std::string>> to_fetch;  // (the peer's merge time, id)
  std::string after;
  for (;;) {
    if (stop) return Status::Ok();
    PLANB_RETURN_IF_ERROR(AskList(peer, {map, after, protocol::kMaxListedBatches}, &page));
    PLANB_RETURN_IF_ERROR(RecordedHere(runtime_, map, page.ids, &recorded, &own));
    listed += page.ids.size();
    for (const protocol::MergedBatch& id : page.ids) {
      // Merged on the peer within the last interval: its upload to this node may well be under way.
      if (page.now_ms - id.merged_ms < cluster.catch_up_interval_ms) continue;
      if (recorded.count(id.id) != 0) continue;
      ++pass->missing;
      if (local_ids_.count(id.id) != 0) {
        ++pass->waiting;
      } else if (id.retained == 0) {
        ++pass->unfetchable;
      } else {
        to_fetch.emplace_back(id.merged_ms, id.id);
      }
    }
    if (page.more == 0 || page.ids.empty()) break;
    after = page.ids.back().id;
  }
  // The peer's version counts batches whose records its maintenance pruned (older than max(7 days, twice
  // batch_retention plus a day)): it no longer lists them, and nobody can send them one by one. Here, with
  // nothing merged, they are missing all the same: unfetchable, so that the snapshot bootstrap below covers them
  // (a node that has merged batches cannot tell which of them it holds, and keeps to the listed ids).
  if (own_empty && peer_batches > listed) {
    pass->missing += peer_batches - listed;
    pass->unfetchable += peer_batches - listed;
  }
  pass->empty_here = own_empty && pass->missing > 0;
  // Nothing here and batches that cannot be fetched one by one: the caller starts from the peer's snapshot
  // instead, before any batch fetched now could make a shard that the snapshot then may not replace.
  if (pass->empty_here && pass->unfetchable > 0) return Status::Ok();
  // In the order the peer merged them: a node that missed a run of batches merges them as the peer did, so
  // order-sensitive types (state: the last merged wins) end alike (ids alone are in no useful order).
  std::sort(to_fetch.begin(), to_fetch.end());
  for (const auto& [merged_ms, id] : to_fetch) {
    if (stop) return Status::Ok();
    const std::string zip = runtime_.home().receive() + "/catchup-" + Token::Random().Shown() + ".zip";
    Status fetched = FetchRetainedBatch(context_, cluster, peer, id, zip);
    if (fetched.ok()) {
      fetched = stage_(zip, id);
      ::unlink(zip.c_str());  // staged: moved away already; refused or already merged: not needed
    }
    if (fetched.code() == Code::kNotFound) {
      ++pass->unfetchable;  // pruned since it was listed
    } else if (!fetched.ok()) {
      ++pass->failed;
      if (pass->first_failure.empty()) pass->first_failure = fetched.message();
    } else {
      ++pass->fetched;
      local_ids_.insert(id);
    }
  }
  return Status::Ok();
}

void PeerCatchUp::RunPass(const std::atomic<bool>& stop) {
  const ClusterConfig& cluster = runtime_.config().cluster;
  RefreshLocalIds();
  for (const auto& [map, config] : runtime_.config().maps) {
    std::string behind;
    for (const std::string& peer : cluster.node_list) {
      if (stop) return;
      if (peer == cluster.node_name) continue;
      MapPass pass;
      const Status asked = CatchUpMap(peer, map, stop, &pass);
      const std::string peer_key = peer + "\n" + map;
      if (!asked.ok()) {
        // A peer that is down is no reason to become behind, nor to stop being behind it: what it had merged when
        // it last answered is still not merged here. Said once until the failure changes.
        if (unreachable_[peer_key] != asked.message()) {
          log_("catch-up: cannot compare map " + map + " with node " + peer + ": " + asked.message());
        }
        unreachable_[peer_key] = asked.message();
        const auto last = behind_peer_.find(peer_key);
        if (last != behind_peer_.end() && behind.empty()) behind = last->second;
        continue;
      }
      unreachable_.erase(peer_key);
      if (pass.fetched > 0) {
        log_("catch-up: fetched " + std::to_string(pass.fetched) + " batch(es) of map " + map + " from node " + peer +
             " and staged them");
      }
      if (pass.failed > 0) {
        log_("catch-up: " + std::to_string(pass.failed) + " batch(es) of map " + map + " from node " + peer +
             " could not be fetched or staged (retried next pass); first: " + pass.first_failure);
      }
      if (pass.unfetchable > 0 && !pass.empty_here && unfetchable_[peer_key] != pass.unfetchable) {
        log_("catch-up: node " + peer + " merged " + std::to_string(pass.unfetchable) + " batch(es) of map " + map +
             " that this node lacks and " + peer + " no longer retains (older than batch_retention, or merged "
             "before retention): this node will not converge on " + map + " by itself (docs/storage-nodes.md, "
             "'A node gone longer than batch_retention')");
      }
      if (pass.unfetchable > 0) {
        unfetchable_[peer_key] = pass.unfetchable;
      } else {
        unfetchable_.erase(peer_key);
      }
      // Nothing here and batches the peer no longer retains: start from the peer's snapshot; the next pass
      // fetches what was merged after it.
      if (pass.empty_here && pass.unfetchable > 0) {
        bool installed = false;
        ContentVersion version;
        const Status booted = BootstrapFromPeer(runtime_, context_, peer, map, stop, &installed, &version);
        if (!booted.ok()) {
          log_("catch-up: map " + map + " has nothing merged here and node " + peer + " no longer retains " +
               std::to_string(pass.unfetchable) + " of its batches; its snapshot could not be installed (retried "
               "next pass): " + booted.message());
        } else if (installed) {
          log_("catch-up: map " + map + " had nothing merged here and node " + peer + " no longer retains " +
               std::to_string(pass.unfetchable) + " of its batches: installed " + peer + "'s snapshot at content "
               "version " + std::to_string(version.batches) + " (verified in a child process)");
          unfetchable_.erase(peer_key);
          behind = "catching up after installing node " + peer + "'s snapshot";
          behind_peer_[peer_key] = behind;
          continue;
        }
      }
      // An empty shard is no replica yet, whatever it can fetch; a non-empty one that lacks only batches nobody
      // retains serves what it has (the line above says it will not converge by itself).
      const uint64_t pending = pass.missing - pass.unfetchable;
      if (pending > 0 || pass.empty_here) {
        const std::string why =
            std::to_string(pass.missing) + " batch(es) merged on node " + peer + " are not merged here yet";
        behind_peer_[peer_key] = why;
        if (behind.empty()) behind = why;
      } else {
        behind_peer_.erase(peer_key);
      }
    }
    SetBehind(map, behind);
  }
}

}  // namespace planb
