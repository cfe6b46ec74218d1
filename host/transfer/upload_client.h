// Sends one staged-format batch zip to one storage node over ZeroMQ (a DEALER socket to the node's ROUTER),
// following docs/protocol.md: begin -> chunks under flow control -> commit -> status until staged (or merged).
// Every request has a deadline; transport errors and timeouts are retried, resuming where the node's copy
// ends; an error answered by the node (checksum, disk full, bad batch) is final, except "busy" (the node has
// too many uploads in progress), which is retried like a timeout.
// Thread-safety: one call per thread; the zmq context is shared (zmq contexts are thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <zmq.hpp>

#include "host/transfer/request_channel.h"
#include "planb/status.h"

namespace planb {

struct UploadSettings {
  int64_t request_timeout_ms = 5000;    // config request_timeout
  int send_part_attempts = 3;           // config send_part_attempts: tries per request before the node fails
  int64_t retry_delay_ms = 10000;       // config send_part_retry_delay
  bool synchronise_merge = false;       // wait until the node has merged the batch, not only staged it
  uint32_t chunk_size = 1u << 20;       // bytes per chunk message
  uint32_t window = 8;                  // chunks in flight at most (memory stays bounded)
  // Called on the uploading thread after a failed attempt, before the retry delay: `next_attempt` is the
  // connection about to be made (2, 3, ...), `failure` what went wrong (for the log; tests use it to start a
  // node only once a first attempt has failed).
  std::function<void(int next_attempt, const Status& failure)> on_retry;
};

using UploadTarget = NodeAddress;  // request_channel.h: the node's name, endpoint and CURVE keys

struct UploadOutcome {
  uint64_t sequence = 0;      // the node's staging sequence number for the batch
  uint64_t bytes_sent = 0;    // chunk bytes actually sent (less than the zip after a resume)
  int attempts = 0;           // connections made
  bool merged = false;        // synchronise_merge: the node reported the batch merged
  // The node had merged this batch already (the id it recorded; a retried load): nothing was staged, and the
  // batch is in on that node. `sequence` is then 0.
  std::string already_merged;
};

// `batch_id` names the batch on every node (e.g. "<node_name>/<stream name>"); a retry with the same id, size
// and checksum resumes. Errors are kIOError for timeouts/transport ("timed out after 3 attempts waiting for
// ..."), else the node's own code and message (kCorruption checksum, kFull disk full, kInvalidArgument bad
// batch, kNotSupported protocol). The message does not carry the node name: the caller adds it.
// A failed merge reported by the node (synchronise_merge) is final too. `send_part_attempts` counts failed
// attempts in a row without progress (docs/protocol.md, "Retries and timeouts").
// `progress`, when set, is called with bytes acknowledged so far (first with the resume offset).
Status UploadBatch(zmq::context_t& context, const UploadTarget& target, const std::string& zip_path,
                   const std::string& batch_id, const UploadSettings& settings, UploadOutcome* outcome,
                   const std::function<void(uint64_t)>& progress = nullptr);

}  // namespace planb
