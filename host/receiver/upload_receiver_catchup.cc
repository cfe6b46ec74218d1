// UploadReceiver's LIST_MERGED and OFFER_BATCH handlers: what a peer storage node asks while it catches up
// (docs/storage-nodes.md). A retained batch is offered and fetched exactly as a snapshot is (a token, then FETCH).
#include "host/config/config.h"
#include "host/receiver/upload_receiver_impl.h"

namespace planb {

using protocol::Command;

void UploadReceiver::Impl::HandleListMerged(const std::string& routing_id, uint64_t request_id,
                                            std::string_view payload, const zmq::message_t& from) {
  protocol::ListMergedRequest request;
  Status status = protocol::DecodeListMerged(payload, &request);
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  if (!IsValidMapName(NormaliseMapName(request.map))) {
    return ReplyError(routing_id, request_id,
                      Status::Invalid("LIST_MERGED: a map name of " + std::to_string(request.map.size()) +
                                      " bytes that is not a valid map name"),
                      "");
  }
  MapScope scope;
  status = access_.Check(from, Right::kNode, &request.map, &scope);
  if (!status.ok()) return ReplyRefused(routing_id, request_id, status, Right::kNode);
  protocol::MergedList reply;
  status = sink_.ListMerged(request, &reply);
  if (!status.ok()) return ReplyError(routing_id, request_id, status.WithContext("LIST_MERGED"), "");
  Reply(routing_id, Command::kMergedList, request_id, protocol::EncodeMergedList(reply));
}

void UploadReceiver::Impl::HandleOfferBatch(const std::string& routing_id, uint64_t request_id,
                                            std::string_view payload, const zmq::message_t& from) {
  protocol::OfferBatchRequest request;
  Status status = protocol::DecodeOfferBatch(payload, &request);
  if (!status.ok()) return ReplySnapshotError(routing_id, request_id, status, "");
  MapScope scope;
  status = access_.Check(from, Right::kNode, nullptr, &scope);
  if (!status.ok()) return ReplyRefused(routing_id, request_id, status, Right::kNode);
  const size_t pending = snapshot_worker_.pending();
  if (pending >= settings_.max_pending_snapshots) {
    const std::string message = "busy: " + std::to_string(pending) + " SNAPSHOT requests in progress, retry later";
    return ReplySnapshotError(routing_id, request_id, Status(Code::kFull, message), "batch " + request.batch_id);
  }
  SnapshotJob job;
  job.routing_id = routing_id;
  job.request_id = request_id;
  job.client = access_.Identify(from, routing_id);
  job.batch_id = std::move(request.batch_id);
  snapshot_worker_.Submit(std::move(job));
}

}  // namespace planb
