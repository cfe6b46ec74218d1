// The accept worker runs BatchSink::Accept for committed uploads on a LoopWorker thread, one batch at a time, so
// that a long verification never stalls the receiver's ROUTER loop (other uploads keep flowing, status polls are
// answered). Stop drops batches not started: the caller still owns their part files.
#pragma once

#include <cstdint>
#include <string>

#include "host/receiver/loop_worker.h"
#include "host/receiver/upload_receiver.h"
#include "host/transfer/token.h"
#include "planb/status.h"

namespace planb {

struct AcceptJob {
  Token token;
  std::string path;
  std::string batch_id;
  MapScope scope;  // the maps the sender's client may upload to
};

struct AcceptResult {
  Token token;
  Status status;
  uint64_t sequence = 0;
  std::string already_merged;  // the batch id this node had merged already ("" : staged as `sequence`)
};

using AcceptWorker = LoopWorker<AcceptJob, AcceptResult>;

// A worker handing each job to sink.Accept. REQUIRES: `sink` outlives the worker.
AcceptWorker MakeAcceptWorker(BatchSink& sink);

}  // namespace planb
