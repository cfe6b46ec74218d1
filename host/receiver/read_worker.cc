#include "host/receiver/read_worker.h"

#include <utility>

#include "host/common/log_text.h"

namespace planb {

ReadWorker MakeReadWorker(BatchSink& sink, size_t threads) {
  return ReadWorker(
      "read worker",
      [&sink](ReadJob& job) {
        ReadJobResult result{{}, job.request_id, Status(), {}, job.client};
        result.status = sink.ExecuteRead(job.request, job.scope, &result.result);
        result.routing_id = std::move(job.routing_id);  // only now: on a throw the failure result needs it
        return result;
      },
      [](ReadJob& job, const std::exception& e) {
        const std::string what = protocol::ReadKindName(static_cast<uint8_t>(job.request.kind)) + " of map " +
                                 LogValue(job.request.map);
        return ReadJobResult{std::move(job.routing_id), job.request_id,
                             Status::Internal("READ " + what + ": " + e.what()), {}, std::move(job.client)};
      },
      threads);
}

}  // namespace planb
