// The read worker runs BatchSink::ExecuteRead for READ requests on a LoopWorker thread, one at a time in arrival
// order, so that a long query never stalls the receiver's ROUTER loop (uploads keep flowing). Stop drops the
// queued requests: their senders time out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/transfer/loop_worker.h"
#include "host/transfer/protocol.h"
#include "host/transfer/upload_receiver.h"
#include "planb/status.h"

namespace planb {

struct ReadJob {
  std::string routing_id;
  uint64_t request_id = 0;
  std::vector<std::string> args;
};

struct ReadJobResult {
  std::string routing_id;
  uint64_t request_id = 0;
  Status status;  // non-OK: the sink refused the request (answered ERROR)
  protocol::ReadResult result;
};

using ReadWorker = LoopWorker<ReadJob, ReadJobResult>;

// A worker handing each request to sink.ExecuteRead. REQUIRES: `sink` outlives the worker.
ReadWorker MakeReadWorker(BatchSink& sink);

}  // namespace planb
