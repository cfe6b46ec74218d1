// The requester's side of SNAPSHOT/FETCH (docs/protocol.md): asks the storage nodes of node_list in order for a
// snapshot of one map newer than the one held, and downloads the first offer into a local zip.
// Thread-safety: one call per thread; the zmq context is shared.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/receiver/snapshot_offer.h"
#include "host/storage/content_version.h"
#include "planb/status.h"

namespace planb {

struct FetchOutcome {
  bool not_modified = false;  // the node said the held snapshot is current (a success; nothing was written)
  // The zip is a diff from the snapshot held to `version` (host/transfer/snapshot_diff_file.h), not a copy.
  bool diff = false;
  // A diff the node offered did not check out (why), and its whole snapshot was asked for instead.
  std::string diff_refused;
  ContentVersion version;     // the version of what was fetched (or of the held one when not modified)
  int64_t node_create_time_ms = 0;
  std::string node;      // the node that answered
  uint64_t bytes = 0;    // zip bytes downloaded
  // A failed fetch where every node that made an offer was behind the snapshot held, all at `nodes_version`:
  // the held one claims batches no node has (a node that forged its version, or nodes whose data was reset).
  bool held_ahead_of_nodes = false;
  ContentVersion nodes_version;
};

// Called as bytes arrive (done, total), for progress on a terminal.
using FetchProgress = std::function<void(uint64_t done, uint64_t total)>;

// Judges a zip that arrived whole (at `zip_path`, as `outcome` describes it), e.g. unpacks and verifies it. An
// error counts against the node that sent it (its message becomes the node's reason; the zip is deleted and the
// next node is tried), except kIOError and kFull, which are this machine's disk and end the fetch with that error.
using FetchCheck = std::function<Status(const std::string& zip_path, const FetchOutcome& outcome)>;

// Tries each node of `cluster.node_list` in order, one attempt each with request_timeout per request: the first
// node that answers NOT_MODIFIED or whose zip arrives whole (size and XXH3 checksum as offered) wins. A node that
// cannot be reached, times out, is busy, dies mid-transfer, or sends a zip that does not check out is skipped
// (its partial zip deleted), and so is one whose zip `check` (when given) refuses. The zip is written to
// `zip_path` + ".part", fsynced and renamed to `zip_path` (which must not exist: kInvalidArgument); on error
// nothing is left at either. Up to 4 FETCHes are in flight at once; `progress` is called after each chunk.
// A node that answers NOT_MODIFIED while `have` is empty (nothing held) counts as failed.
// With `since` (the snapshot held, at `have`, and its maintenance mark) and not `accept_older`, each node is asked
// SNAPSHOT_SINCE: its offer may be a diff (`outcome->diff`), which `check` applies; a node that predates the
// request, or whose diff `check` refuses, is asked for its whole snapshot at once (`outcome->diff_refused`).
// A node offering fewer batches than `have` is behind and skipped, unless `accept_older` (the user chose to move
// back to what the nodes have: `planb refresh --accept-older`).
// Errors: kNotFound when every node answered that it has no data for `map` (nothing merged yet); kInvalidArgument
// without a node_list; kIOError "snapshot of MAP: the snapshot held (content version H) is ahead of every storage
// node that answered ..." (outcome->held_ahead_of_nodes) when every offer was behind `have` at one version; else
// kIOError "snapshot of MAP: no storage node could provide one: node1 (timed out after 5000 ms), node2 (checksum
// mismatch ...)" naming every node tried and why (kFull/kIOError from the local disk name the file).
Status FetchSnapshot(zmq::context_t& context, const ClusterConfig& cluster, const std::string& map,
                     const ContentVersion& have, const std::string& zip_path, FetchOutcome* outcome,
                     const FetchProgress& progress = {}, const FetchCheck& check = {}, bool accept_older = false,
                     const std::optional<SnapshotSince>& since = std::nullopt);

// Catch-up: downloads the zip of `batch_id`, which storage node `node` retains (OFFER_BATCH, then FETCH as for a
// snapshot: size and checksum as offered), to `zip_path` (which must not exist), one attempt. On error nothing is
// left at `zip_path`. Errors: kNotFound when the node does not retain the batch; kPermissionDenied when it refused
// this node's key or did not prove its own; kFull/kIOError from the local disk naming the file; else kIOError
// "batch ID from NODE: why".
Status FetchRetainedBatch(zmq::context_t& context, const ClusterConfig& cluster, const std::string& node,
                          const std::string& batch_id, const std::string& zip_path);

}  // namespace planb
