// Helpers for the upload tests: a real BatchSink that stages into a directory, a receiver running on its own
// thread on tcp://127.0.0.1:*, and a raw DEALER that speaks the wire protocol frame by frame (to send what a
// well-behaved client never would). Header-only, so that only *_test.cc files live in this directory.
#pragma once

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "host/common/file_util.h"
#include "host/receiver/upload_receiver.h"
#include "host/security/curve_key.h"
#include "host/transfer/protocol.h"
#include "host/transfer/upload_client.h"
#include "support/endpoints.h"
#include "support/test_env.h"

namespace planb::testing {

inline constexpr auto kTestDeadline = std::chrono::seconds(20);

inline std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

inline uint64_t Xxh3(const std::string& bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

// .part files left in `dir`.
inline std::vector<std::string> PartFiles(const std::string& dir) {
  std::vector<std::string> parts;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".part") parts.push_back(entry.path().filename().string());
  }
  return parts;
}

// Moves accepted zips to <staging>/<sequence>.zip with sequences 1, 2, ...; can be told to refuse batches or
// to report merges. Accept runs on the receiver's worker thread, MergeStateOf on its Run thread.
class TestSink : public BatchSink {
 public:
  struct Staged {
    std::string batch_id;
    uint64_t sequence;
    std::string path;
  };

  explicit TestSink(std::string staging_dir) : staging_dir_(std::move(staging_dir)) {
    std::filesystem::create_directories(staging_dir_);
  }

  Status Accept(const std::string& zip_path, const std::string& batch_id, const MapScope& scope,
                uint64_t* sequence, std::string* already_merged) override {
    already_merged->clear();
    std::lock_guard<std::mutex> lock(mu_);
    accept_scopes_.push_back(scope);
    if (refusal_) return *refusal_;
    *sequence = ++last_sequence_;
    std::string path = staging_dir_ + "/" + std::to_string(*sequence) + ".zip";
    PLANB_RETURN_IF_ERROR(DurableRename(zip_path, path));
    staged_.push_back({batch_id, *sequence, path});
    changed_.notify_all();
    return Status::Ok();
  }

  MergeState MergeStateOf(uint64_t sequence, std::string* error) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++merge_queries_;
    changed_.notify_all();
    if (merged_.count(sequence) != 0) return MergeState::kMerged;
    if (merge_error_) {
      *error = *merge_error_;
      return MergeState::kFailed;
    }
    return MergeState::kPending;
  }

  // READ: answers exit code = number of keys, out = the kind, the map and the keys joined by '|', err = "err";
  // while holding reads (HoldReads), waits until ReleaseReads.
  Status ExecuteRead(const protocol::ReadRequest& request, const MapScope& scope,
                     protocol::ReadResult* result) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++reads_started_;
    read_scopes_.push_back(scope);
    changed_.notify_all();
    // HoldReads holds every read; HoldReadsOf(map) only reads of that map.
    changed_.wait(lock, [&] { return !hold_reads_ && (hold_map_.empty() || request.map != hold_map_); });
    result->exit_code = static_cast<int>(request.keys.size());
    result->out = protocol::ReadKindName(static_cast<uint8_t>(request.kind)) + "|" + request.map;
    for (const std::string& key : request.keys) result->out += "|" + key;
    result->err = "err";
    return Status::Ok();
  }
  // The scopes the receiver passed with each Accept and ExecuteRead, in call order.
  std::vector<MapScope> accept_scopes() {
    std::lock_guard<std::mutex> lock(mu_);
    return accept_scopes_;
  }
  std::vector<MapScope> read_scopes() {
    std::lock_guard<std::mutex> lock(mu_);
    return read_scopes_;
  }
  void HoldReads() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_reads_ = true;
  }
  void HoldReadsOf(const std::string& map) {
    std::lock_guard<std::mutex> lock(mu_);
    hold_map_ = map;
  }
  void ReleaseReads() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_reads_ = false;
    hold_map_.clear();
    changed_.notify_all();
  }
  // Waits (with the test deadline) until ExecuteRead has been entered `count` times.
  bool WaitForReadsStarted(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kTestDeadline, [&] { return reads_started_ >= count; });
  }

  void RefuseWith(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    refusal_ = std::move(status);
  }
  void MarkMerged(uint64_t sequence) {
    std::lock_guard<std::mutex> lock(mu_);
    merged_.insert(sequence);
  }
  void FailMerges(std::string error) {
    std::lock_guard<std::mutex> lock(mu_);
    merge_error_ = std::move(error);
  }
  std::vector<Staged> staged() {
    std::lock_guard<std::mutex> lock(mu_);
    return staged_;
  }
  // Waits (with the test deadline) until `count` batches are staged and MergeStateOf was asked `queries` times.
  bool WaitFor(size_t count, int queries = 0) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kTestDeadline, [&] { return staged_.size() >= count && merge_queries_ >= queries; });
  }

 private:
  std::string staging_dir_;
  std::mutex mu_;
  std::vector<MapScope> accept_scopes_;
  std::vector<MapScope> read_scopes_;
  std::condition_variable changed_;
  uint64_t last_sequence_ = 0;
  std::vector<Staged> staged_;
  std::optional<Status> refusal_;
  std::set<uint64_t> merged_;
  std::optional<std::string> merge_error_;
  int merge_queries_ = 0;
  bool hold_reads_ = false;
  std::string hold_map_;
  int reads_started_ = 0;
};

inline ReceiverSettings TestReceiverSettings(const std::string& receive_dir) {
  ReceiverSettings settings;
  settings.receive_dir = receive_dir;
  settings.chunk_size = 256 * 1024;
  settings.window = 3;
  settings.status_hold_ms = 200;
  return settings;
}

inline UploadSettings TestUploadSettings() {
  UploadSettings settings;
  settings.request_timeout_ms = 5000;
  settings.send_part_attempts = 3;
  settings.retry_delay_ms = 10;
  settings.chunk_size = 256 * 1024;
  settings.window = 3;
  return settings;
}

// A receiver serving on its own thread; stopped and joined on destruction. Declare the zmq context before it.
// A fault point (PLANB_FAULT) given to Start or Restart is set before the thread starts and unset after it is
// joined: the receiver reads the variable (getenv) while it runs, and setenv meanwhile would be a data race.
class RunningReceiver {
 public:
  RunningReceiver(zmq::context_t& context, ReceiverSettings settings, BatchSink& sink)
      : receiver_(context, std::move(settings), sink, [this](const std::string& line) {
          std::lock_guard<std::mutex> lock(mu_);
          log_.push_back(line);
        }) {}
  ~RunningReceiver() { Stop(); }

  // Binds (to tcp://127.0.0.1:* unless told otherwise) and starts Run on a thread.
  void Start(const std::string& endpoint = "tcp://127.0.0.1:*", const std::string& fault = "") {
    Status status = receiver_.Bind(endpoint, &endpoint_);
    ASSERT_TRUE(status.ok()) << status.message();
    RunThread(fault);
  }
  // Stops Run and runs it again on the same socket: a node that restarted and forgot every upload, while
  // requests sent meanwhile wait in the socket for the new run.
  void Restart(const std::string& fault = "") {
    Stop();
    stop_ = false;
    RunThread(fault);
  }
  void Stop() {
    stop_ = true;
    if (!thread_.joinable()) return;
    thread_.join();
    if (fault_set_) ::unsetenv("PLANB_FAULT");  // only now: no receiver thread reads it any more
    fault_set_ = false;
    EXPECT_TRUE(run_status_.ok()) << run_status_.message();
  }
  const std::string& endpoint() const { return endpoint_; }
  const Status& run_status() const { return run_status_; }
  std::string Log() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all;
    for (const auto& line : log_) all += line + "\n";
    return all;
  }

 private:
  void RunThread(const std::string& fault) {
    if (!fault.empty()) {
      ::setenv("PLANB_FAULT", fault.c_str(), 1);  // before the thread: nothing reads the environment yet
      fault_set_ = true;
    }
    thread_ = std::thread([this] { run_status_ = receiver_.Run(stop_); });
  }

  std::mutex mu_;
  std::vector<std::string> log_;
  UploadReceiver receiver_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string endpoint_;
  Status run_status_;
  bool fault_set_ = false;
};

struct RawReply {
  protocol::Header header;
  std::string payload;
  std::string data;  // frame C (FETCH_DATA)
  size_t frames = 0;
};

// A DEALER that sends frames as given and reads replies raw.
class RawSender {
 public:
  RawSender(zmq::context_t& context, const std::string& endpoint) : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::sndtimeo, SendTimeoutMs());
    socket_.connect(endpoint);
  }
  // The same over CURVE as the client whose pair `keys.own` is, to the node whose public key it names. With
  // `receive_buffer_bytes`, a client that does not read: ZeroMQ takes in one message at most and the kernel
  // about that many bytes, so the rest stays queued on the node.
  RawSender(zmq::context_t& context, const std::string& endpoint, const CurveClientKeys& keys,
            int receive_buffer_bytes = 0)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::sndtimeo, SendTimeoutMs());
    if (receive_buffer_bytes > 0) {
      socket_.set(zmq::sockopt::rcvhwm, 1);
      socket_.set(zmq::sockopt::rcvbuf, receive_buffer_bytes);
    }
    socket_.set(zmq::sockopt::curve_serverkey, keys.server_public_key);
    socket_.set(zmq::sockopt::curve_publickey, keys.own.public_key);
    socket_.set(zmq::sockopt::curve_secretkey, keys.own.secret_key);
    socket_.connect(endpoint);
  }

  // Queues the frames. A DEALER whose connection failed its handshake has no pipe until its next try, and a send
  // then waits: it fails the test after the test deadline instead of hanging the test binary.
  void Send(const std::vector<std::string>& frames) {
    if (!SendFrames(frames, zmq::send_flags::none))
      ADD_FAILURE() << "could not send to the node within the test deadline";
  }
  void Request(protocol::Command command, const std::string& payload, const std::string* chunk = nullptr) {
    Send(RequestFrames(command, payload, chunk));
  }
  // The same when the node may refuse the connection (a plaintext client of a CURVE node): queued only if a pipe
  // is there now; whether it was, is returned.
  bool TryRequest(protocol::Command command, const std::string& payload) {
    return SendFrames(RequestFrames(command, payload, nullptr), zmq::send_flags::dontwait);
  }
  // The next reply; fails the test when none comes within the test deadline.
  RawReply Receive() {
    RawReply reply;
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::duration_cast<std::chrono::milliseconds>(kTestDeadline));
    if ((item.revents & ZMQ_POLLIN) == 0) {
      ADD_FAILURE() << "no reply from the receiver";
      return reply;
    }
    std::vector<zmq::message_t> frames;
    (void)zmq::recv_multipart(socket_, std::back_inserter(frames));
    reply.frames = frames.size();
    if (!frames.empty()) {
      EXPECT_TRUE(protocol::DecodeHeader(frames[0].to_string_view(), &reply.header).ok());
    }
    if (frames.size() > 1) reply.payload = frames[1].to_string();
    if (frames.size() > 2) reply.data = frames[2].to_string();
    return reply;
  }
  // Receives an ERROR reply and returns it; fails the test for any other reply.
  protocol::ErrorReply ReceiveError() {
    RawReply reply = Receive();
    protocol::ErrorReply error;
    EXPECT_EQ(reply.header.command, static_cast<uint16_t>(protocol::Command::kError))
        << protocol::CommandName(reply.header.command);
    EXPECT_EQ(reply.header.version, protocol::kProtocolVersion);
    EXPECT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
    return error;
  }
  // BEGIN of `contents` as `batch_id`; `checksum` is what this sender's COMMIT of it will declare (Commit).
  protocol::ReadyReply Begin(const std::string& batch_id, const std::string& contents, uint64_t checksum,
                             uint32_t flags = 0) {
    const std::string tail = contents.substr(contents.size() - std::min<size_t>(contents.size(), protocol::kTailBytes));
    Request(protocol::Command::kBegin,
            protocol::EncodeBegin({batch_id, contents.size(), XXH3_64bits(tail.data(), tail.size()), flags}));
    RawReply reply = Receive();
    protocol::ReadyReply ready;
    EXPECT_EQ(reply.header.command, static_cast<uint16_t>(protocol::Command::kReady)) << reply.payload;
    EXPECT_TRUE(protocol::DecodeReady(reply.payload, &ready).ok());
    declared_[ready.token] = checksum;
    return ready;
  }
  // COMMIT of the upload of `token`, declaring the checksum given to its Begin (0 for a token Begin never got).
  void Commit(Token token) {
    const auto it = declared_.find(token);
    Request(protocol::Command::kCommit, protocol::EncodeCommit({token, it == declared_.end() ? 0 : it->second}));
  }
  // Sends `contents[from, to)` in chunks of `chunk_size` and waits for every ack; returns the last received total.
  uint64_t SendChunks(Token token, const std::string& contents, size_t from, size_t to, size_t chunk_size) {
    uint64_t received = 0;
    for (size_t offset = from; offset < to; offset += chunk_size) {
      std::string chunk = contents.substr(offset, std::min(chunk_size, to - offset));
      Request(protocol::Command::kChunk, protocol::EncodeChunk({token, offset}), &chunk);
      RawReply reply = Receive();
      protocol::ChunkAck ack;
      EXPECT_EQ(reply.header.command, static_cast<uint16_t>(protocol::Command::kChunkAck)) << reply.payload;
      EXPECT_TRUE(protocol::DecodeChunkAck(reply.payload, &ack).ok());
      received = ack.received_total;
    }
    return received;
  }
  // Receives a STATUS reply and returns it; fails the test for any other reply.
  protocol::StatusReply ReceiveStatus(uint64_t* request_id = nullptr) {
    RawReply reply = Receive();
    protocol::StatusReply status;
    EXPECT_EQ(reply.header.command, static_cast<uint16_t>(protocol::Command::kStatusReply)) << reply.payload;
    EXPECT_TRUE(protocol::DecodeStatusReply(reply.payload, &status).ok());
    if (request_id != nullptr) *request_id = reply.header.request_id;
    return status;
  }
  // Polls STATUS (unheld) until the upload of `token` is in `state`; false at the test deadline.
  bool WaitForState(Token token, protocol::UploadState state) {
    const auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
    while (std::chrono::steady_clock::now() < deadline) {
      Request(protocol::Command::kStatus, protocol::EncodeStatus({token, 0}));
      if (ReceiveStatus().state == state) return true;
    }
    return false;
  }
  uint64_t last_request_id() const { return request_id_; }

 private:
  static int SendTimeoutMs() {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(kTestDeadline).count());
  }
  std::vector<std::string> RequestFrames(protocol::Command command, const std::string& payload,
                                         const std::string* chunk) {
    std::vector<std::string> frames{protocol::EncodeHeader(command, ++request_id_), payload};
    if (chunk != nullptr) frames.push_back(*chunk);
    return frames;
  }
  bool SendFrames(const std::vector<std::string>& frames, zmq::send_flags flags) {
    for (size_t i = 0; i < frames.size(); ++i) {
      const zmq::send_flags more = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
      // Only the first frame can find no pipe: the rest of a message follows it.
      if (!socket_.send(zmq::buffer(frames[i]), more | (i == 0 ? flags : zmq::send_flags::none))) return false;
    }
    return true;
  }
  zmq::socket_t socket_;
  uint64_t request_id_ = 0;
  std::map<Token, uint64_t> declared_;  // the checksum each upload's COMMIT declares
};

// A temp dir, a zmq context, a TestSink staging into <dir>/staging and (once started) a receiver on
// <dir>/receive. Members are destroyed receiver first, context after every socket is gone.
class UploadFixture : public ::testing::Test {
 protected:
  UploadFixture() : sink_(dir_ / "staging") {}

  std::string receive_dir() const { return dir_ / "receive"; }
  ReceiverSettings Settings() const { return TestReceiverSettings(receive_dir()); }
  // Creates the receiver; Start() binds it and runs it.
  RunningReceiver& NewReceiver(const ReceiverSettings& settings) {
    receiver_ = std::make_unique<RunningReceiver>(context_, settings, sink_);
    return *receiver_;
  }
  void StartReceiver() { StartReceiver(Settings()); }
  void StartReceiver(const ReceiverSettings& settings) { NewReceiver(settings).Start(); }
  std::string endpoint() const { return receiver_->endpoint(); }

  // Writes `size` random bytes to <dir>/<name> and returns them.
  std::string WriteZip(const std::string& name, size_t size, uint32_t seed = 1) {
    std::string contents = RandomBytes(size, seed);
    WriteFile(dir_ / name, contents);
    return contents;
  }
  Status Upload(const std::string& name, const std::string& batch_id, const UploadSettings& settings,
                UploadOutcome* outcome, const std::string& endpoint = "") {
    return UploadBatch(context_, {"node1", endpoint.empty() ? this->endpoint() : endpoint}, dir_ / name, batch_id,
                       settings, outcome);
  }
  // A well-formed upload still succeeds and arrives intact: the receiver survived whatever came before.
  void ExpectStillServes() {
    std::string contents = WriteZip("good.zip", 600 * 1024 + 7, 99);
    UploadOutcome outcome;
    Status status = Upload("good.zip", "node1a/good", TestUploadSettings(), &outcome);
    ASSERT_TRUE(status.ok()) << status.message();
    std::vector<TestSink::Staged> staged = sink_.staged();
    ASSERT_FALSE(staged.empty());
    EXPECT_EQ(staged.back().batch_id, "node1a/good");
    EXPECT_EQ(ReadFile(staged.back().path), contents);
  }

  TempDir dir_;
  zmq::context_t context_;
  TestSink sink_;
  std::unique_ptr<RunningReceiver> receiver_;
};

}  // namespace planb::testing
