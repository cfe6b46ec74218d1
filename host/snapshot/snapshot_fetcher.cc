#include "host/snapshot/snapshot_fetcher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "host/common/bulk_xxh3.h"
#include "host/common/disk_room.h"
#include "host/common/file_util.h"
#include "host/common/hex.h"
#include "host/common/transfer_pace.h"
#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"

namespace planb {

namespace {

using Clock = RequestChannel::Clock;
using protocol::Command;

// FETCHes in flight at once: enough to keep a link busy while each chunk is written, few enough that memory
// stays at a few chunks.
constexpr size_t kWindow = 4;
// How a node with too many requests in progress starts its ERROR message (docs/protocol.md).
constexpr char kBusyPrefix[] = "busy: ";

// How one node's attempt ended.
enum class Verdict {
  kWon,      // not modified, or the zip arrived whole and passed the check
  kFailed,   // `why` says why; the next node is tried
  kNoData,   // the node has nothing merged into the map (`why` holds its message)
  kBehind,   // the node offered fewer batches than the snapshot held (`outcome->version` is its offer's)
};

struct Request {
  const std::string& map;
  const ContentVersion& have;
  const std::string& zip_path;
  int64_t timeout_ms;
  uint64_t max_bytes;  // the largest zip accepted (max_batch_size)
  uint64_t min_rate;   // bytes/s the zip must keep arriving at, over windows of 2 x timeout_ms (min_transfer_rate)
  const FetchProgress& progress;
  const FetchCheck& check;
  bool accept_older;   // an offer behind `have` is taken (refresh --accept-older)
  std::string batch_id = std::string();  // not empty: OFFER_BATCH of this retained batch instead of SNAPSHOT
  const SnapshotSince* since = nullptr;  // not null: SNAPSHOT_SINCE (a diff is welcome) instead of SNAPSHOT
};

// Closes and (unless kept) unlinks the partial zip when the attempt ends.
class PartFile {
 public:
  explicit PartFile(std::string path) : path_(std::move(path)) {}
  ~PartFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!kept_) ::unlink(path_.c_str());
  }
  Status Open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, HomeFileMode());
    if (fd_ < 0) return Errno("creating");
    return Status::Ok();
  }
  Status WriteAt(uint64_t offset, const char* data, size_t size) {
    while (size > 0) {
      const ssize_t n = ::pwrite(fd_, data, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("writing");
      data += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  // fsync, close, rename to `to` (which then holds the zip).
  Status Finish(const std::string& to) {
    if (::fsync(fd_) != 0) return Errno("syncing");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Errno("closing");
    PLANB_RETURN_IF_ERROR(DurableRename(path_, to));
    kept_ = true;
    return Status::Ok();
  }

 private:
  Status Errno(const char* what) const {
    const int err = errno;
    const std::string message = std::string(what) + " " + path_ + ": " + std::strerror(err);
    return err == ENOSPC ? Status(Code::kFull, message) : Status::IOError(message);
  }

  std::string path_;
  int fd_ = -1;
  bool kept_ = false;
};

// The message of an ERROR reply: OK with `*no_data` for kNotFound, else the node's message in `why`.
void ReadError(const RequestChannel::Reply& reply, const char* request, bool* no_data, std::string* why) {
  *no_data = false;
  protocol::ErrorReply error;
  const Status status = protocol::DecodeError(reply.payload, &error);
  if (!status.ok()) {
    *why = "bad reply to " + std::string(request) + ": " + status.message();
    return;
  }
  const Code code = protocol::CodeFromWire(error.code);
  *no_data = code == Code::kNotFound;
  // "busy: ..." explains itself; other codes are named so that "refused" is not mistaken for "unreachable".
  if (error.message.rfind(kBusyPrefix, 0) == 0 || code == Code::kNotFound) {
    *why = error.message;
  } else {
    *why = std::string(request) + " refused (" + CodeName(code) + "): " + error.message;
  }
}

class NodeFetch {
 public:
  NodeFetch(RequestChannel& channel, const Request& request, FetchOutcome* outcome)
      : channel_(channel), request_(request), outcome_(outcome) {}

  // A non-OK status ends the whole fetch (a local failure, or kPermissionDenied: this client may not fetch from
  // the node, or the node did not prove its identity); else `verdict` and `why`. With request.since, asks for a
  // diff first; a node that does not know SNAPSHOT_SINCE, or whose diff does not check out, is asked for the whole
  // snapshot next.
  Status Run(Verdict* verdict, std::string* why);

 private:
  Status RunOnce(bool since, Verdict* verdict, std::string* why);

  Status Download(const protocol::SnapshotOffer& offer, bool* ok, std::string* why);
  std::string TimedOut() const { return "timed out after " + std::to_string(request_.timeout_ms) + " ms"; }

  RequestChannel& channel_;
  const Request& request_;
  FetchOutcome* outcome_;
  bool ask_whole_ = false;  // the SNAPSHOT_SINCE attempt ended so that the whole snapshot is worth asking for
};

Status NodeFetch::Run(Verdict* verdict, std::string* why) {
  const bool since = request_.since != nullptr && request_.batch_id.empty() && !request_.accept_older;
  PLANB_RETURN_IF_ERROR(RunOnce(since, verdict, why));
  if (!since || *verdict != Verdict::kFailed || !ask_whole_) return Status::Ok();
  if (outcome_->diff) outcome_->diff_refused = *why;
  outcome_->diff = false;
  why->clear();
  return RunOnce(false, verdict, why);
}

Status NodeFetch::RunOnce(bool since, Verdict* verdict, std::string* why) {
  *verdict = Verdict::kFailed;
  uint64_t request_id = 0;
  const bool batch = !request_.batch_id.empty();
  const char* asked = batch ? "OFFER_BATCH" : since ? "SNAPSHOT_SINCE" : "SNAPSHOT";
  bool sent = false;
  if (batch) {
    sent = channel_.Send(Command::kOfferBatch, protocol::EncodeOfferBatch({request_.batch_id}), nullptr, &request_id);
  } else if (since) {
    const protocol::SnapshotSinceRequest ask{request_.map, request_.have.batches, request_.have.digest,
                                             request_.since->last_condensed_ms};
    sent = channel_.Send(Command::kSnapshotSince, protocol::EncodeSnapshotSince(ask), nullptr, &request_id);
  } else {
    const protocol::SnapshotRequest ask{request_.map, request_.have.batches, request_.have.digest};
    sent = channel_.Send(Command::kSnapshot, protocol::EncodeSnapshot(ask), nullptr, &request_id);
  }
  if (!sent) {
    *why = TimedOut() + " sending " + asked;
    return Status::Ok();
  }
  RequestChannel::Reply reply;
  bool timed_out = false;
  const Status awaited = channel_.Await(Clock::now() + std::chrono::milliseconds(request_.timeout_ms),
                                        [request_id](uint64_t id) { return id == request_id; }, &reply, &timed_out);
  // Refused keys and unproven identities end the fetch: a client misconfigured for a node is told so.
  if (channel_.key_refused()) {
    return Status::PermissionDenied(
        (batch ? "not authorised for node (catch-up)" : "not authorised for snapshot on " + request_.map) + ": " +
        awaited.message());
  }
  if (awaited.code() == Code::kPermissionDenied) return awaited;
  if (!awaited.ok()) {
    *why = awaited.message();
    return Status::Ok();
  }
  if (timed_out) {
    *why = TimedOut() + " waiting for the SNAPSHOT_OFFER";
    return Status::Ok();
  }
  if (reply.command == static_cast<uint16_t>(Command::kError)) {
    protocol::ErrorReply error;
    const bool decoded = protocol::DecodeError(reply.payload, &error).ok();
    if (decoded && protocol::CodeFromWire(error.code) == Code::kPermissionDenied) {
      return Status::PermissionDenied(error.message);
    }
    bool no_data = false;
    ReadError(reply, asked, &no_data, why);
    if (no_data) *verdict = Verdict::kNoData;
    // A node that predates SNAPSHOT_SINCE says it does not know the command: it still serves SNAPSHOT.
    ask_whole_ = since && decoded && protocol::CodeFromWire(error.code) == Code::kNotSupported;
    return Status::Ok();
  }
  if (reply.command != static_cast<uint16_t>(Command::kSnapshotOffer)) {
    *why = "unexpected reply " + protocol::CommandName(reply.command) + " to " + asked;
    return Status::Ok();
  }
  protocol::SnapshotOffer offer;
  Status status = protocol::DecodeSnapshotOffer(reply.payload, &offer);
  if (!status.ok()) {
    *why = "bad reply: " + status.message();
    return Status::Ok();
  }
  outcome_->version = ContentVersion{offer.batches, offer.digest};
  outcome_->node_create_time_ms = offer.create_time_ms;
  if (batch && (offer.not_modified != 0 || !outcome_->version.empty())) {
    *why = "an offer of batch " + request_.batch_id + " that is not a batch's (not modified, or with a version)";
    return Status::Ok();
  }
  if (offer.not_modified == protocol::kOfferDiff) {
    if (!since) {
      *why = "a diff offered in answer to " + std::string(asked);
      return Status::Ok();
    }
    // A diff only adds batches to the snapshot held.
    if (offer.batches <= request_.have.batches) {
      *why = "a diff to content version " + outcome_->version.ToString() + ", which is not ahead of the snapshot "
             "held (" + request_.have.ToString() + ")";
      ask_whole_ = true;
      return Status::Ok();
    }
    outcome_->diff = true;
  } else if (offer.not_modified != 0) {
    // Nothing held is never "current": a node that says so would leave the requester with no snapshot.
    if (request_.have.empty()) {
      *why = "answered not modified to a request holding no snapshot";
      return Status::Ok();
    }
    outcome_->not_modified = true;
    *verdict = Verdict::kWon;
    return Status::Ok();
  }
  if (offer.chunk_size == 0 || offer.chunk_size > protocol::kMaxUploadChunkSize) {
    *why = "SNAPSHOT_OFFER with chunk size " + std::to_string(offer.chunk_size) + " (must be 1 to " +
           std::to_string(protocol::kMaxUploadChunkSize) + " bytes)";
    return Status::Ok();
  }
  if (offer.total_size == 0) {
    *why = "SNAPSHOT_OFFER of an empty zip";
    return Status::Ok();
  }
  if (offer.total_size > request_.max_bytes) {
    // Checked before a byte is written: a node offering more would fill this node's disk.
    *why = "SNAPSHOT_OFFER of " + std::to_string(offer.total_size) + " bytes, more than max_batch_size (" +
           std::to_string(request_.max_bytes) + ")";
    return Status::Ok();
  }
  if (!batch && offer.batches < request_.have.batches && !request_.accept_older) {
    // Merges only add batches: a node with fewer is behind the snapshot held, which must not be replaced by older
    // data (readers would flip between nodes' states).
    *why = "behind: its copy has " + std::to_string(offer.batches) + " batches merged, the snapshot held has " +
           std::to_string(request_.have.batches);
    *verdict = Verdict::kBehind;
    return Status::Ok();
  }
  // Checked before a byte is written too: the offer's size (the download stops there) must fit above the margin
  // every write on this node keeps, or the zip would fill the disk before its checksum could fail.
  const std::string dir = std::filesystem::path(request_.zip_path).parent_path().string();
  const DiskRoom room = MeasureDiskRoom(dir.empty() ? "." : dir);
  if (!room.Fits(offer.total_size)) {
    return Status(Code::kFull, (batch ? "batch " + request_.batch_id : "snapshot of " + request_.map) +
                                   ": not enough disk for the " +
                                   std::to_string(offer.total_size) + "-byte zip offered: " +
                                   room.Describe());
  }
  bool ok = false;
  PLANB_RETURN_IF_ERROR(Download(offer, &ok, why));
  if (!ok) return Status::Ok();
  outcome_->bytes = offer.total_size;
  if (request_.check) {
    status = request_.check(request_.zip_path, *outcome_);
    if (!status.ok()) {
      ::unlink(request_.zip_path.c_str());
      if (status.code() == Code::kIOError || status.code() == Code::kFull) return status;
      *why = status.message();
      ask_whole_ = outcome_->diff;  // the node's whole snapshot does not depend on its diff being right
      return Status::Ok();
    }
  }
  *verdict = Verdict::kWon;
  return Status::Ok();
}

Status NodeFetch::Download(const protocol::SnapshotOffer& offer, bool* ok, std::string* why) {
  *ok = false;
  PartFile part(request_.zip_path + ".part");
  PLANB_RETURN_IF_ERROR(part.Open());
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> hash(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(hash.get());
  const uint64_t total = offer.total_size;
  struct Pending {
    uint64_t request_id;
    uint64_t offset;
    uint32_t length;
    Clock::time_point sent;
  };
  std::deque<Pending> in_flight;  // in offset order
  // Chunks written but not hashed yet: the hash runs in offset order, replies may not.
  std::map<uint64_t, zmq::message_t> unhashed;
  uint64_t next = 0;
  uint64_t hashed = 0;
  Clock::time_point last_reply = Clock::now();
  // A node that answers every FETCH promptly with a byte never times out; this gives it up for the next node.
  TransferPace pace(last_reply);
  const auto window = std::chrono::milliseconds(2 * request_.timeout_ms);
  while (hashed < total) {
    const std::string slow = pace.Check(Clock::now(), hashed, total - hashed, window, request_.min_rate);
    if (!slow.empty()) {
      *why = "too slow: " + slow + " (at offset " + std::to_string(hashed) + " of " + std::to_string(total) + ")";
      return Status::Ok();
    }
    while (in_flight.size() < kWindow && next < total) {
      const uint32_t length = static_cast<uint32_t>(std::min<uint64_t>(offer.chunk_size, total - next));
      uint64_t id = 0;
      if (!channel_.Send(Command::kFetch, protocol::EncodeFetch({offer.token, next, length}), nullptr, &id)) {
        *why = TimedOut() + " sending FETCH at offset " + std::to_string(next);
        return Status::Ok();
      }
      in_flight.push_back({id, next, length, Clock::now()});
      next += length;
    }
    // The oldest FETCH is due request_timeout after it was sent, or after the last reply (a window of chunks
    // queued on a slow link takes its time).
    const Clock::time_point deadline =
        std::max(in_flight.front().sent, last_reply) + std::chrono::milliseconds(request_.timeout_ms);
    RequestChannel::Reply reply;
    bool timed_out = false;
    const Status awaited = channel_.Await(
        deadline,
        [&in_flight](uint64_t id) {
          return std::any_of(in_flight.begin(), in_flight.end(), [id](const Pending& p) { return p.request_id == id; });
        },
        &reply, &timed_out);
    if (!awaited.ok()) {
      *why = awaited.message();
      return Status::Ok();
    }
    if (timed_out) {
      *why = TimedOut() + " waiting for the zip's bytes at offset " + std::to_string(hashed) + " of " +
             std::to_string(total);
      return Status::Ok();
    }
    // Await let only replies to requests in flight through.
    const auto pending = std::find_if(in_flight.begin(), in_flight.end(),
                                      [&](const Pending& p) { return p.request_id == reply.request_id; });
    if (reply.command == static_cast<uint16_t>(Command::kError)) {
      bool no_data = false;
      ReadError(reply, "FETCH", &no_data, why);
      *why += " (at offset " + std::to_string(pending->offset) + " of " + std::to_string(total) + ")";
      return Status::Ok();
    }
    if (reply.command != static_cast<uint16_t>(Command::kFetchData)) {
      *why = "unexpected reply " + protocol::CommandName(reply.command) + " to FETCH";
      return Status::Ok();
    }
    protocol::FetchData data;
    Status status = protocol::DecodeFetchData(reply.payload, &data);
    if (!status.ok()) {
      *why = "bad reply: " + status.message();
      return Status::Ok();
    }
    const size_t size = reply.has_data ? reply.data.size() : 0;
    if (data.token != offer.token) {
      *why = "FETCH_DATA for token " + data.token.Shown() + ", expected " + offer.token.Shown();
      return Status::Ok();
    }
    if (data.offset != pending->offset) {
      *why = "FETCH_DATA for offset " + std::to_string(data.offset) + ", asked for offset " +
             std::to_string(pending->offset);
      return Status::Ok();
    }
    if (!reply.has_data) {
      *why = "FETCH_DATA without its data frame at offset " + std::to_string(data.offset);
      return Status::Ok();
    }
    if (size > pending->length) {
      *why = "FETCH_DATA with " + std::to_string(size) + " bytes at offset " + std::to_string(data.offset) +
             ", more than the " + std::to_string(pending->length) + " asked for";
      return Status::Ok();
    }
    if (size == 0) {
      *why = "FETCH_DATA with no bytes at offset " + std::to_string(data.offset) + ", before the end of the " +
             std::to_string(total) + "-byte zip";
      return Status::Ok();
    }
    if (size < pending->length) {
      // Each FETCH asks for no more than remains, so only a node that lost bytes answers with fewer.
      *why = "FETCH_DATA with " + std::to_string(size) + " of the " + std::to_string(pending->length) +
             " bytes asked for at offset " + std::to_string(data.offset) + " of the " + std::to_string(total) +
             "-byte zip";
      return Status::Ok();
    }
    PLANB_RETURN_IF_ERROR(part.WriteAt(data.offset, static_cast<const char*>(reply.data.data()), size));
    in_flight.erase(pending);
    unhashed.emplace(data.offset, std::move(reply.data));
    while (!unhashed.empty() && unhashed.begin()->first == hashed) {
      const zmq::message_t& chunk = unhashed.begin()->second;
      XXH3_64bits_update(hash.get(), chunk.data(), chunk.size());
      hashed += chunk.size();
      unhashed.erase(unhashed.begin());
    }
    last_reply = Clock::now();
    if (request_.progress) request_.progress(hashed, total);
  }
  const uint64_t checksum = XXH3_64bits_digest(hash.get());
  if (checksum != offer.checksum) {
    *why = "checksum mismatch: the " + std::to_string(total) + "-byte zip hashes to " + Hex16(checksum) +
           ", the offer said " + Hex16(offer.checksum);
    return Status::Ok();
  }
  PLANB_RETURN_IF_ERROR(part.Finish(request_.zip_path));
  *ok = true;
  return Status::Ok();
}

}  // namespace

Status FetchSnapshot(zmq::context_t& context, const ClusterConfig& cluster, const std::string& map,
                     const ContentVersion& have, const std::string& zip_path, FetchOutcome* outcome,
                     const FetchProgress& progress, const FetchCheck& check, bool accept_older,
                     const std::optional<SnapshotSince>& since) {
  if (cluster.node_list.empty()) {
    return Status::Invalid("snapshot of " + map + ": no storage nodes to fetch from (the config has no node_list)");
  }
  struct stat st;
  if (::lstat(zip_path.c_str(), &st) == 0) {
    return Status::Invalid("snapshot of " + map + ": " + zip_path + " already exists");
  }
  Request request{map,   have, zip_path, cluster.request_timeout_ms, cluster.max_batch_size,
                  cluster.min_transfer_rate, progress, check, accept_older};
  if (since && !have.empty()) request.since = &*since;
  std::string failures;
  bool all_no_data = true;
  // The offers behind the snapshot held, and whether any node made another offer (or answered otherwise than
  // unreachable): a held snapshot ahead of every node that offered one, all at one version, is said loudly.
  std::vector<std::pair<std::string, ContentVersion>> behind;
  bool other_offers = false;
  uint64_t next_request_id = 1;  // shared by the channels, so a late reply to an earlier node's request is stale
  for (const std::string& node : cluster.node_list) {
    *outcome = FetchOutcome();
    std::string why;
    Verdict verdict = Verdict::kFailed;
    const auto found = cluster.nodes.find(node);
    if (found == cluster.nodes.end() || found->second.endpoint.empty()) {
      why = "no endpoint: add [node." + node + "] endpoint = tcp://HOST:PORT";
    } else {
      try {
        RequestChannel channel(context, AddressOf(cluster, node), cluster.request_timeout_ms, &next_request_id);
        PLANB_RETURN_IF_ERROR(
            NodeFetch(channel, request, outcome).Run(&verdict, &why).WithContext("snapshot of " + map + " from " + node));
      } catch (const zmq::error_t& e) {
        verdict = Verdict::kFailed;
        why = "endpoint " + found->second.endpoint + ": " + e.what();
      }
    }
    if (verdict == Verdict::kWon) {
      outcome->node = node;
      return Status::Ok();
    }
    if (verdict != Verdict::kNoData) all_no_data = false;
    if (verdict == Verdict::kBehind) {
      behind.emplace_back(node, outcome->version);
    } else if (outcome->version != ContentVersion()) {
      other_offers = true;  // it offered a version and failed otherwise (a bad zip, too slow)
    }
    failures += (failures.empty() ? "" : ", ") + node + " (" + why + ")";
  }
  *outcome = FetchOutcome();
  const bool agree = !behind.empty() && std::all_of(behind.begin(), behind.end(), [&behind](const auto& b) {
    return b.second == behind.front().second;
  });
  if (agree && !other_offers) {
    outcome->held_ahead_of_nodes = true;
    outcome->nodes_version = behind.front().second;
    std::string nodes;
    for (const auto& b : behind) nodes += (nodes.empty() ? "" : ", ") + b.first;
    return Status::IOError("snapshot of " + map + ": the snapshot held (content version " +
                           std::to_string(have.batches) + ") is ahead of every storage node that answered: " + nodes +
                           (behind.size() == 1 ? " has" : " have") + " content version " +
                           std::to_string(outcome->nodes_version.batches) +
                           ". Merges only add batches, so the held one claims batches no node has (a node that "
                           "forged its version, or nodes whose data was reset); it keeps serving. To install what "
                           "the nodes have: planb refresh --accept-older " + map);
  }
  if (all_no_data) {
    return Status::NotFound("snapshot of " + map + ": no storage node has data of it: " + failures);
  }
  return Status::IOError("snapshot of " + map + ": no storage node could provide one: " + failures);
}

Status FetchRetainedBatch(zmq::context_t& context, const ClusterConfig& cluster, const std::string& node,
                          const std::string& batch_id, const std::string& zip_path) {
  struct stat st;
  if (::lstat(zip_path.c_str(), &st) == 0) {
    return Status::Invalid("batch " + batch_id + ": " + zip_path + " already exists");
  }
  const auto found = cluster.nodes.find(node);
  if (found == cluster.nodes.end() || found->second.endpoint.empty()) {
    return Status::Invalid("batch " + batch_id + ": node " + node + " has no endpoint");
  }
  const std::string no_map;
  const ContentVersion none;
  const FetchProgress no_progress;
  const FetchCheck no_check;
  Request request{no_map, none, zip_path, cluster.request_timeout_ms, cluster.max_batch_size,
                  cluster.min_transfer_rate, no_progress, no_check, false};
  request.batch_id = batch_id;
  FetchOutcome outcome;
  std::string why;
  Verdict verdict = Verdict::kFailed;
  uint64_t next_request_id = 1;
  try {
    RequestChannel channel(context, AddressOf(cluster, node), cluster.request_timeout_ms, &next_request_id);
    PLANB_RETURN_IF_ERROR(NodeFetch(channel, request, &outcome).Run(&verdict, &why).WithContext("batch " + batch_id +
                                                                                                 " from " + node));
  } catch (const zmq::error_t& e) {
    why = "endpoint " + found->second.endpoint + ": " + e.what();
  }
  if (verdict == Verdict::kWon) return Status::Ok();
  if (verdict == Verdict::kNoData) return Status::NotFound("batch " + batch_id + " from " + node + ": " + why);
  return Status::IOError("batch " + batch_id + " from " + node + ": " + why);
}

}  // namespace planb
