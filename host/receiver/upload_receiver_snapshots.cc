// UploadReceiver's SNAPSHOT and FETCH handlers: the sink prepares a snapshot zip on the snapshot worker; the
// receiver opens it, offers it under a token, and serves its bytes in chunks (docs/protocol.md).
#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "host/common/fault_point.h"
#include "host/common/hex.h"
#include "host/config/config.h"
#include "host/receiver/upload_receiver_impl.h"

namespace planb {

using protocol::Command;

void UploadReceiver::Impl::HandleSnapshot(const std::string& routing_id, uint64_t request_id,
                                          std::string_view payload, const zmq::message_t& from) {
  protocol::SnapshotRequest request;
  Status status = protocol::DecodeSnapshot(payload, &request);
  if (!status.ok()) return ReplySnapshotError(routing_id, request_id, status, "");
  SnapshotSince since;
  since.have = ContentVersion{request.have_batches, request.have_digest};
  QueueSnapshot(routing_id, request_id, "SNAPSHOT", std::move(request.map), since, /*diff_ok=*/false, from);
}

void UploadReceiver::Impl::HandleSnapshotSince(const std::string& routing_id, uint64_t request_id,
                                               std::string_view payload, const zmq::message_t& from) {
  protocol::SnapshotSinceRequest request;
  Status status = protocol::DecodeSnapshotSince(payload, &request);
  if (!status.ok()) return ReplySnapshotError(routing_id, request_id, status, "");
  SnapshotSince since;
  since.have = ContentVersion{request.have_batches, request.have_digest};
  since.last_condensed_ms = request.last_condensed_ms;
  QueueSnapshot(routing_id, request_id, "SNAPSHOT_SINCE", std::move(request.map), since, /*diff_ok=*/true, from);
}

void UploadReceiver::Impl::QueueSnapshot(const std::string& routing_id, uint64_t request_id, const char* request,
                                         std::string map, const SnapshotSince& since, bool diff_ok,
                                         const zmq::message_t& from) {
  if (!IsValidMapName(NormaliseMapName(map))) {
    // Not echoed: the name is the peer's, of any length and bytes.
    return ReplySnapshotError(routing_id, request_id,
                              Status::Invalid(std::string(request) + ": a map name of " + std::to_string(map.size()) +
                                              " bytes that is not a valid map name (1 to 128 letters, digits and _, "
                                              "starting with a letter)"),
                              "");
  }
  MapScope scope;
  Status status = access_.Check(from, Right::kSnapshot, &map, &scope);
  if (!status.ok()) return ReplyRefused(routing_id, request_id, status, Right::kSnapshot);
  const size_t pending = snapshot_worker_.pending();
  if (pending >= settings_.max_pending_snapshots) {
    // The requester treats "busy:" like a node that does not answer: it tries the next node.
    const std::string message = "busy: " + std::to_string(pending) + " SNAPSHOT requests in progress, retry later";
    return ReplySnapshotError(routing_id, request_id, Status(Code::kFull, message), map);
  }
  SnapshotJob job;
  job.routing_id = routing_id;
  job.request_id = request_id;
  job.map = std::move(map);
  job.have = since.have;
  job.client = access_.Identify(from, routing_id);
  if (diff_ok) job.since = since;
  snapshot_worker_.Submit(std::move(job));
}

void UploadReceiver::Impl::TakeSnapshotResults() {
  for (SnapshotJobResult& result : snapshot_worker_.TakeResults()) {
    SetSender(result.client);  // the offer, or its error's log line, is that client's
    OfferSnapshot(result);
  }
}

void UploadReceiver::Impl::OfferSnapshot(SnapshotJobResult& result) {
  if (!result.status.ok()) return ReplySnapshotError(result.routing_id, result.request_id, result.status, result.map);
  const PreparedSnapshot& prepared = result.prepared;
  if (!prepared.map.empty()) result.map = prepared.map;  // as configured, for the log
  // A retained batch is served as a snapshot is; its entry and log lines name the batch.
  if (!result.batch_id.empty()) result.map = "batch " + result.batch_id;
  protocol::SnapshotOffer offer;
  offer.batches = prepared.version.batches;
  offer.digest = prepared.version.digest;
  if (prepared.not_modified) {
    offer.not_modified = protocol::kOfferNotModified;
    if (settings_.metrics != nullptr) settings_.metrics->SnapshotNotModified();
    return Reply(result.routing_id, Command::kSnapshotOffer, result.request_id, protocol::EncodeSnapshotOffer(offer));
  }
  if (served_.size() >= settings_.max_served_snapshots) {
    const std::string message = "busy: " + std::to_string(served_.size()) + " snapshots being fetched, retry later";
    return ReplySnapshotError(result.routing_id, result.request_id, Status(Code::kFull, message), result.map);
  }
  const size_t mine = served_.CountFor(result.client);
  if (mine >= ClientShare(settings_.max_served_snapshots)) {
    const std::string message = "busy: this client has " + std::to_string(mine) +
                                " snapshots being fetched, the most one client may have (" +
                                std::to_string(ClientShare(settings_.max_served_snapshots)) + "); retry later";
    return ReplySnapshotError(result.routing_id, result.request_id, Status(Code::kFull, message), result.map);
  }
  const Token token = NewToken();
  // Opened now, before the source may replace the zip: the fd keeps it readable however long the fetch takes.
  Status status = served_.Add(token, result.map, TokenOwner(result.client), result.client, prepared, Clock::now());
  if (!status.ok()) return ReplySnapshotError(result.routing_id, result.request_id, status, result.map);
  offer.token = token;
  offer.total_size = prepared.size;
  offer.checksum = prepared.checksum;
  offer.create_time_ms = prepared.create_time_ms;
  offer.chunk_size = settings_.chunk_size;
  if (prepared.diff) offer.not_modified = protocol::kOfferDiff;
  if (settings_.metrics != nullptr && result.batch_id.empty()) {
    if (prepared.diff) {
      settings_.metrics->SnapshotDiffOffered();
    } else {
      settings_.metrics->SnapshotOffered();
    }
  }
  if (prepared.diff) {
    Log("offering snapshot diff of " + result.map + " from version " + result.since_version.ToString() + " to " +
        prepared.version.ToString() + " (" + std::to_string(prepared.size) + " bytes) to " + result.client +
        " as token " + token.Shown());
  } else if (result.batch_id.empty()) {
    Log("offering snapshot of " + result.map + " at version " + prepared.version.ToString() + " (" +
        std::to_string(prepared.size) + " bytes) to " + result.client + " as token " + token.Shown());
  } else {
    Log("offering retained " + LogValue(result.map) + " (" + std::to_string(prepared.size) + " bytes) to " +
        result.client + " as token " + token.Shown());
  }
  Reply(result.routing_id, Command::kSnapshotOffer, result.request_id, protocol::EncodeSnapshotOffer(offer));
}

void UploadReceiver::Impl::HandleFetch(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                                       const std::string& client) {
  protocol::FetchRequest fetch;
  Status status = protocol::DecodeFetch(payload, &fetch);
  if (!status.ok()) return ReplySnapshotError(routing_id, request_id, status, "");
  ServedSnapshots::Entry* entry = served_.Find(fetch.token, TokenOwner(client));
  if (entry == nullptr) {
    // kNotFound: the requester asks SNAPSHOT again (its token expired, or this node restarted). Another client's
    // token gets the same answer as one never offered: a token is no bearer pass, and says nothing of others'.
    return ReplySnapshotError(routing_id, request_id,
                              Status::NotFound("FETCH for unknown snapshot token " + fetch.token.Shown() +
                                               " (never offered to this client, expired, or the node restarted)"),
                              "");
  }
  entry->last_touch = Clock::now();
  if (fetch.offset > entry->size) {
    return ReplySnapshotError(
        routing_id, request_id,
        Status::Invalid("FETCH offset " + std::to_string(fetch.offset) + " is past the end of the snapshot (" +
                        std::to_string(entry->size) + " bytes)"),
        entry->map);
  }
  if (fetch.length == 0 || fetch.length > settings_.chunk_size) {
    return ReplySnapshotError(routing_id, request_id,
                              Status::Invalid("FETCH length " + std::to_string(fetch.length) + " is not 1 to " +
                                              std::to_string(settings_.chunk_size) + " (this node's chunk size)"),
                              entry->map);
  }
  // snapshot.truncate: the zip served as if it ended halfway (the offer still says its full size).
  const uint64_t end = FaultPointActive("snapshot.truncate") ? entry->size / 2 : entry->size;
  const size_t length =
      fetch.offset >= end ? 0 : static_cast<size_t>(std::min<uint64_t>(fetch.length, end - fetch.offset));
  // A client that asks for chunks and does not read them would make the node queue them all (reply_backlog.h).
  status = CheckBacklog(client, length);
  if (!status.ok()) return ReplySnapshotError(routing_id, request_id, status, entry->map);
  std::string bytes(length, '\0');
  status = ServedSnapshots::ReadAt(*entry, fetch.offset, length, bytes.data());
  if (!status.ok()) return ReplySnapshotError(routing_id, request_id, status, entry->map);
  if (length > 0 && FaultPointActive("snapshot.corrupt")) bytes[length / 2] ^= 0x5a;
  zmq::message_t data = backlog_.Message(client, std::move(bytes));
  const bool first = !entry->fetched;
  entry->fetched = true;
  entry->served += length;
  if (settings_.metrics != nullptr) {
    settings_.metrics->SnapshotBytesSent(length);
    if (length > 0 && fetch.offset + length == entry->size) settings_.metrics->SnapshotSent();
  }
  ReplyWithData(routing_id, Command::kFetchData, request_id, protocol::EncodeFetchData({fetch.token, fetch.offset}),
                std::move(data));
  if (first) FaultPoint("snapshot.mid_transfer");
}

void UploadReceiver::Impl::ReplySnapshotError(const std::string& routing_id, uint64_t request_id, const Status& status,
                                              const std::string& map) {
  if (settings_.metrics != nullptr) settings_.metrics->SnapshotRefused(status);
  if (map.empty()) {
    LogPeerError("snapshot error", status, "from " + Sender(routing_id), "");
  } else {
    // A retained batch's offer names itself ("batch ID", OfferSnapshot).
    const bool batch = map.rfind("batch ", 0) == 0;
    LogPeerError("snapshot error", status, batch ? "for " + LogValue(map) : "for map " + LogValue(map),
                 Sender(routing_id));
  }
  const Status told = ForSender(status, nullptr);
  Reply(routing_id, Command::kError, request_id,
        protocol::EncodeError({static_cast<uint16_t>(told.code()), told.message()}));
}

uint64_t UploadReceiver::Impl::ClientShare(uint64_t total) const {
  const uint64_t percent = std::clamp<uint32_t>(settings_.max_client_share_percent, 1, 100);
  return std::max<uint64_t>(total / 100 * percent + total % 100 * percent / 100, 1);
}

std::string UploadReceiver::Impl::TokenOwner(const std::string& client) const {
  // In plaintext every peer may do everything, and a requester may fetch on another connection than it asked on.
  return access_.curve() ? client : std::string();
}

Token UploadReceiver::Impl::NewToken() {
  Token token = Token::Random();
  while (uploads_.count(token) != 0 || served_.Contains(token)) token = Token::Random();
  return token;
}

}  // namespace planb
