#include "host/receiver/read_worker.h"

#include <utility>

namespace planb {

ReadWorker MakeReadWorker(BatchSink& sink, size_t threads) {
  return ReadWorker(
      "read worker",
      [&sink](ReadJob& job) {
        ReadJobResult result{{}, job.request_id, Status(), {}, job.client};
        result.status = sink.ExecuteRead(job.args, job.scope, &result.result.exit_code, &result.result.out, &result.result.err);
        result.routing_id = std::move(job.routing_id);  // only now: on a throw the failure result needs it
        return result;
      },
      [](ReadJob& job, const std::exception& e) {
        const std::string command = job.args.empty() ? "" : job.args[0];
        return ReadJobResult{std::move(job.routing_id), job.request_id,
                             Status::Internal("READ " + command + ": " + e.what()), {}, std::move(job.client)};
      },
      threads);
}

}  // namespace planb
