#include "host/receiver/accept_worker.h"

#include "host/common/fault_point.h"

namespace planb {

AcceptWorker MakeAcceptWorker(BatchSink& sink) {
  return AcceptWorker(
      "accept worker",
      [&sink](AcceptJob& job) {
        AcceptResult result{job.token, Status(), 0, ""};
        result.status = sink.Accept(job.path, job.batch_id, job.scope, &result.sequence, &result.already_merged);
        if (result.status.ok() && result.already_merged.empty()) FaultPoint("receive.after_stage");
        return result;
      },
      [](AcceptJob& job, const std::exception& e) {
        return AcceptResult{job.token, Status::Internal("accepting batch " + job.batch_id + ": " + e.what()), 0, ""};
      });
}

}  // namespace planb
