// Catch-up (docs/storage-nodes.md): a storage node compares what it merged into each map with what every peer of
// node_list merged (LIST_MERGED), fetches each batch it lacks from a peer that retains it (OFFER_BATCH + FETCH),
// and stages it through the same verification as an upload (in a child process, then the already-merged check).
// Merges are exactly-once by batch id, so a batch fetched while its upload also arrives changes nothing twice.
// While a node lacks batches a peer merged at least one catch-up interval ago and could still fetch, or its shard
// of a map is empty where a peer's is not, it is "behind" on that map: it refuses remote reads and snapshots of it
// (readers go to another node) until those batches are merged here. A peer that stops answering leaves the node
// as behind as it last was on that peer's batches: going down proves nothing merged.
// Thread-safety: RunPass on one thread; Behind from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <zmq.hpp>

#include "host/runtime.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

class PeerCatchUp {
 public:
  // Verifies the fetched zip at `zip_path` (the batch `batch_id`) and stages it, as the node's Accept does; the
  // zip is the caller's to delete afterwards.
  using Stage = std::function<Status(const std::string& zip_path, const std::string& batch_id)>;
  using Log = std::function<void(const std::string&)>;

  PeerCatchUp(Runtime& runtime, Stage stage, Log log);

  // One pass over every peer and every configured map; returns early once `stop` is set. Logs what it fetched,
  // what it could not, and every change of a map's behind state.
  void RunPass(const std::atomic<bool>& stop);

  // Whether this node is behind a peer on `map` (normalised name); `why` says which peer and how far.
  bool Behind(const std::string& map, std::string* why) const;

 private:
  struct MapPass {
    uint64_t missing = 0;      // aged batches of the peer not merged here
    uint64_t fetched = 0;      // of them, fetched and staged by this pass
    uint64_t waiting = 0;      // of them, staged here already (waiting for the merge)
    uint64_t unfetchable = 0;  // of them, not retained by the peer
    uint64_t failed = 0;       // of them, whose fetch or staging failed (retried next pass)
    std::string first_failure;
    bool empty_here = false;   // this node has nothing merged into the map, the peer has
  };
  // Compares `map` with `peer`; fills `pass`. Non-OK when the peer could not be asked at all.
  Status CatchUpMap(const std::string& peer, const std::string& map, const std::atomic<bool>& stop, MapPass* pass);
  Status AskList(const std::string& peer, const protocol::ListMergedRequest& request, protocol::MergedList* reply);
  // The ids of the batches staged or quarantined here now (read from their manifests, cached by file name).
  void RefreshLocalIds();
  void SetBehind(const std::string& map, const std::string& why);

  Runtime& runtime_;
  Stage stage_;
  Log log_;
  zmq::context_t context_;
  uint64_t next_request_id_ = 1;
  std::map<std::string, std::string> id_of_file_;  // staged or quarantined zip path -> its batch id
  std::set<std::string> local_ids_;                // the ids of id_of_file_
  std::map<std::string, std::string> unreachable_;  // "peer\nmap" -> the last failure logged
  std::map<std::string, uint64_t> unfetchable_;     // "peer\nmap" -> the count of unfetchable batches logged
  // "peer\nmap" -> why this node was behind that peer on that map when the peer last answered: a peer that stops
  // answering leaves the node as far behind as it was, never caught up.
  std::map<std::string, std::string> behind_peer_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> behind_;  // map -> why (guarded by mutex_)
};

}  // namespace planb
