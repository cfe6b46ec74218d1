// The read worker runs BatchSink::ExecuteRead for READ requests on a small pool of LoopWorker threads, started in
// arrival order, so that a long query neither stalls the receiver's ROUTER loop (uploads keep flowing) nor the
// lookups behind it (they run on the other threads). Stop drops the queued requests: their senders time out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/receiver/loop_worker.h"
#include "host/receiver/upload_receiver.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

struct ReadJob {
  std::string routing_id;
  uint64_t request_id = 0;
  protocol::ReadRequest request;
  MapScope scope;      // the maps the sender's client may read
  std::string client;  // who sent it, for the per-client bounds (ClientAccess::Identify)
};

struct ReadJobResult {
  std::string routing_id;
  uint64_t request_id = 0;
  Status status;  // non-OK: the sink refused the request (answered ERROR)
  protocol::ReadResult result;
  std::string client;  // the job's
};

using ReadWorker = LoopWorker<ReadJob, ReadJobResult>;

// Threads of the read pool: a slow query holds one, the others keep serving lookups.
inline constexpr size_t kReadThreads = 3;

// A worker handing each request to sink.ExecuteRead on `threads` threads. REQUIRES: `sink` outlives the worker
// and its ExecuteRead is safe to call from several threads at once.
ReadWorker MakeReadWorker(BatchSink& sink, size_t threads = kReadThreads);

}  // namespace planb
