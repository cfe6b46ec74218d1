// UploadBatch against a real UploadReceiver over tcp://127.0.0.1: the whole path, retries and the node's
// answers as the sender sees them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <set>
#include <thread>

#include "host/transfer/upload_client.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class UploadBatchTest : public UploadFixture {};

constexpr size_t kChunk = 256 * 1024;

TEST_F(UploadBatchTest, MultiChunkZipArrivesByteIdentical) {
  const std::string contents = WriteZip("batch.zip", 3 * 1024 * 1024 + 12345);  // 13 chunks, window 3
  StartReceiver();
  std::vector<uint64_t> progress;
  UploadOutcome outcome;
  Status status = UploadBatch(context_, {"node1", endpoint()}, dir_ / "batch.zip", "node1a/orders",
                              TestUploadSettings(), &outcome, [&](uint64_t acked) { progress.push_back(acked); });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(outcome.sequence, 1u);
  EXPECT_EQ(outcome.bytes_sent, contents.size());
  EXPECT_EQ(outcome.attempts, 1);
  EXPECT_FALSE(outcome.merged);
  std::vector<TestSink::Staged> staged = sink_.staged();
  ASSERT_EQ(staged.size(), 1u);
  EXPECT_EQ(staged[0].batch_id, "node1a/orders");
  EXPECT_EQ(ReadFile(staged[0].path), contents);
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), contents.size());
  EXPECT_GE(progress.size(), contents.size() / kChunk);
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  EXPECT_THAT(receiver_->Log(), HasSubstr("staged batch 1 (id node1a/orders) from sender "));
  EXPECT_THAT(receiver_->Log(), HasSubstr(" at 127.0.0.1 (" + std::to_string(contents.size()) + " bytes)"));
}

TEST_F(UploadBatchTest, EmptyZipUploads) {
  WriteZip("empty.zip", 0);
  StartReceiver();
  UploadOutcome outcome;
  Status status = Upload("empty.zip", "node1a/empty", TestUploadSettings(), &outcome);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), "");
}

TEST_F(UploadBatchTest, ParallelSendersShareOneReceiver) {
  StartReceiver();
  constexpr int kSenders = 4;
  std::vector<std::string> contents;
  for (int i = 0; i < kSenders; ++i) {
    contents.push_back(WriteZip("b" + std::to_string(i) + ".zip", 700 * 1024 + 1000 * i, 10 + i));
  }
  std::vector<Status> statuses(kSenders);
  std::vector<std::thread> senders;
  for (int i = 0; i < kSenders; ++i) {
    senders.emplace_back([&, i] {
      UploadOutcome outcome;
      statuses[i] =
          Upload("b" + std::to_string(i) + ".zip", "node" + std::to_string(i) + "/s", TestUploadSettings(), &outcome);
    });
  }
  for (auto& t : senders) t.join();
  for (int i = 0; i < kSenders; ++i) EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].message();
  std::vector<TestSink::Staged> staged = sink_.staged();
  ASSERT_EQ(staged.size(), static_cast<size_t>(kSenders));
  std::set<uint64_t> sequences;
  for (const auto& batch : staged) {
    sequences.insert(batch.sequence);
    int i = std::stoi(batch.batch_id.substr(4));
    EXPECT_EQ(ReadFile(batch.path), contents[i]) << batch.batch_id;
  }
  EXPECT_EQ(sequences, (std::set<uint64_t>{1, 2, 3, 4}));
}

TEST_F(UploadBatchTest, NodeThatNeverAnswersTimesOutAfterTheConfiguredAttempts) {
  WriteZip("batch.zip", 1000);
  SilentNode silent(context_);
  UploadSettings settings = TestUploadSettings();
  settings.request_timeout_ms = 200;
  settings.send_part_attempts = 2;
  settings.retry_delay_ms = 10;
  int retries = 0;
  settings.on_retry = [&](int, const Status&) { ++retries; };
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/orders", settings, &outcome, silent.endpoint());
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_EQ(status.message(),
            "timed out after 2 attempts (request_timeout 200 ms) waiting for the node's reply to BEGIN");
  EXPECT_EQ(outcome.attempts, 2);
  EXPECT_EQ(retries, 1);
  EXPECT_EQ(outcome.bytes_sent, 0u);
}

// Issue 11 #15: a node that is down refuses the connection; each attempt says so as soon as it is known.
TEST_F(UploadBatchTest, NodeThatIsDownRefusesEachAttempt) {
  WriteZip("batch.zip", 1000);
  UploadSettings settings = TestUploadSettings();
  settings.request_timeout_ms = 20 * 1000;  // a refusal must not wait for it
  settings.send_part_attempts = 2;
  settings.retry_delay_ms = 10;
  std::vector<std::string> retries;
  settings.on_retry = [&](int, const Status& failure) { retries.push_back(failure.message()); };
  const std::string down = UnusedEndpoint(context_);
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/orders", settings, &outcome, down);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_EQ(status.message(), "failed after 2 attempts (request_timeout 20000 ms) waiting for the node's reply to "
                              "BEGIN: connection refused by " + down);
  EXPECT_EQ(retries, std::vector<std::string>{"failed waiting for the node's reply to BEGIN: connection refused by " +
                                              down});
  EXPECT_EQ(outcome.attempts, 2);
}

TEST_F(UploadBatchTest, NodeStartedAfterAFailedAttemptIsReachedByTheRetry) {
  const std::string contents = WriteZip("batch.zip", 500 * 1024);
  const std::string node_endpoint = UnusedEndpoint(context_);
  RunningReceiver& receiver = NewReceiver(Settings());
  UploadSettings settings = TestUploadSettings();
  settings.request_timeout_ms = 300;
  settings.send_part_attempts = 2;
  Status first_failure;
  // The node comes up only once the first attempt has failed; the retry must find it.
  settings.on_retry = [&](int next_attempt, const Status& failure) {
    EXPECT_EQ(next_attempt, 2);
    first_failure = failure;
    receiver.Start(node_endpoint);
  };
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/late", settings, &outcome, node_endpoint);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(outcome.attempts, 2);
  EXPECT_EQ(first_failure.message(), "failed waiting for the node's reply to BEGIN: connection refused by " +
                                         node_endpoint);
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
}

TEST_F(UploadBatchTest, ResumesWhereADroppedSenderStopped) {
  const std::string contents = WriteZip("batch.zip", 2 * 1024 * 1024 + 1000);
  StartReceiver();
  {
    // A sender that dies after three chunks: BEGIN, chunks, then its socket is gone.
    RawSender raw(context_, endpoint());
    protocol::ReadyReply ready = raw.Begin("node1a/resume", contents, Xxh3(contents));
    EXPECT_EQ(ready.resume_offset, 0u);
    EXPECT_EQ(raw.SendChunks(ready.token, contents, 0, 3 * kChunk, kChunk), 3 * kChunk);
  }
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/resume", TestUploadSettings(), &outcome);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(outcome.bytes_sent, contents.size() - 3 * kChunk);
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
  EXPECT_THAT(receiver_->Log(), HasSubstr("resuming upload of batch node1a/resume at " + std::to_string(3 * kChunk)));
}

TEST_F(UploadBatchTest, NodeThatForgotTheUploadIsSentItAgain) {
  const std::string contents = WriteZip("batch.zip", 3 * 1024 * 1024);
  StartReceiver();
  bool restarted = false;
  UploadOutcome outcome;
  // Once two chunks are acknowledged the node restarts: the chunks in flight meet an unknown token.
  Status status = UploadBatch(context_, {"node1", endpoint()}, dir_ / "batch.zip", "node1a/restart",
                              TestUploadSettings(), &outcome, [&](uint64_t acked) {
                                if (acked >= 2 * kChunk && !restarted) {
                                  restarted = true;
                                  receiver_->Restart();
                                }
                              });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(restarted);
  EXPECT_EQ(outcome.attempts, 2);
  EXPECT_GT(outcome.bytes_sent, contents.size());
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
  EXPECT_THAT(receiver_->Log(), HasSubstr("CHUNK for unknown upload token"));
}

TEST_F(UploadBatchTest, RepeatingAFinishedUploadDoesNotStageItTwice) {
  WriteZip("batch.zip", 300 * 1024);
  StartReceiver();
  UploadOutcome first;
  ASSERT_TRUE(Upload("batch.zip", "node1a/once", TestUploadSettings(), &first).ok());
  // As after a COMMIT whose reply was lost: the same batch again rejoins the committed upload.
  UploadOutcome again;
  Status status = Upload("batch.zip", "node1a/once", TestUploadSettings(), &again);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(again.sequence, first.sequence);
  EXPECT_EQ(again.bytes_sent, 0u);
  EXPECT_EQ(sink_.staged().size(), 1u);
}

// Another upload of a batch the node staged from an earlier one and has merged since (a load run again after a
// failure): "already merged", nothing staged or sent, no staging sequence of its own.
TEST_F(UploadBatchTest, RejoiningAnUploadMergedSinceIsAlreadyMerged) {
  WriteZip("batch.zip", 300 * 1024);
  StartReceiver();
  UploadOutcome first;
  ASSERT_TRUE(Upload("batch.zip", "node1a/once", TestUploadSettings(), &first).ok());
  EXPECT_TRUE(first.already_merged.empty());
  sink_.MarkMerged(first.sequence);
  UploadOutcome again;
  Status status = Upload("batch.zip", "node1a/once", TestUploadSettings(), &again);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(again.already_merged, "node1a/once");
  EXPECT_TRUE(again.merged);
  EXPECT_EQ(again.sequence, 0u);
  EXPECT_EQ(again.bytes_sent, 0u);
  EXPECT_EQ(sink_.staged().size(), 1u);
}

TEST_F(UploadBatchTest, RefusedBatchIsFinalWithTheNodesCodeAndMessage) {
  WriteZip("batch.zip", 300 * 1024);
  sink_.RefuseWith(Status::Invalid("batch zip x.zip: unknown map 'nope'"));
  StartReceiver();
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/refused", TestUploadSettings(), &outcome);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "batch zip x.zip: unknown map 'nope'");
  EXPECT_EQ(outcome.attempts, 1);
  EXPECT_TRUE(sink_.staged().empty());
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  EXPECT_THAT(receiver_->Log(), HasSubstr("node1a/refused: batch zip x.zip: unknown map 'nope'"));
}

TEST_F(UploadBatchTest, FullDiskIsReportedAsFullAndTheNodeRecovers) {
  WriteZip("batch.zip", 300 * 1024);
  // The fault is set before the receiver thread starts and unset after it is joined (RunningReceiver).
  NewReceiver(Settings()).Start("tcp://127.0.0.1:*", "receive.disk_full");
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/full", TestUploadSettings(), &outcome);
  EXPECT_EQ(status.code(), Code::kFull);
  // The sender is told of its batch, not of the node's part file (named by the upload's token) or directories.
  EXPECT_THAT(status.message(), HasSubstr("disk full writing the upload of batch node1a/full"));
  EXPECT_THAT(status.message(), Not(HasSubstr(receive_dir())));
  EXPECT_THAT(status.message(), Not(HasSubstr(".part")));
  EXPECT_THAT(receiver_->Log(), HasSubstr("disk full writing " + receive_dir() + "/"));  // the log keeps it
  EXPECT_EQ(outcome.attempts, 1);
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  EXPECT_THAT(receiver_->Log(), HasSubstr("upload error for batch node1a/full: disk full writing"));
  receiver_->Restart();  // the same node with room again
  ExpectStillServes();
}

TEST_F(UploadBatchTest, SynchroniseMergeWaitsUntilTheNodeSaysMerged) {
  WriteZip("batch.zip", 300 * 1024);
  StartReceiver();
  UploadSettings settings = TestUploadSettings();
  settings.synchronise_merge = true;
  auto upload = std::async(std::launch::async, [&] {
    UploadOutcome outcome;
    Status status = Upload("batch.zip", "node1a/sync", settings, &outcome);
    return std::make_pair(status, outcome);
  });
  // Staged, and the node has been asked about the merge twice: the sender is waiting for it.
  EXPECT_TRUE(sink_.WaitFor(1, 2));
  EXPECT_EQ(upload.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  sink_.MarkMerged(1);
  auto [status, outcome] = upload.get();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(outcome.merged);
  EXPECT_EQ(outcome.sequence, 1u);
}

TEST_F(UploadBatchTest, MergeFailureReportedByTheNodeIsFinal) {
  WriteZip("batch.zip", 300 * 1024);
  sink_.FailMerges("map orders: disk full");
  StartReceiver();
  UploadSettings settings = TestUploadSettings();
  settings.synchronise_merge = true;
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/merge", settings, &outcome);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "batch node1a/merge was staged as 1 but its merge failed: map orders: disk full");
  EXPECT_EQ(outcome.attempts, 1);
  EXPECT_EQ(sink_.staged().size(), 1u);
}

TEST_F(UploadBatchTest, MissingZipNamesIt) {
  StartReceiver();
  UploadOutcome outcome;
  Status status = Upload("missing.zip", "node1a/missing", TestUploadSettings(), &outcome);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_THAT(status.message(), HasSubstr("cannot open batch zip " + (dir_ / "missing.zip")));
  EXPECT_EQ(outcome.attempts, 0);
}

TEST_F(UploadBatchTest, BusyNodeIsTriedAgainAfterTheRetryDelay) {
  const std::string contents = WriteZip("batch.zip", 300 * 1024);
  ReceiverSettings receiver_settings = Settings();
  receiver_settings.max_open_uploads = 1;
  StartReceiver(receiver_settings);
  RawSender raw(context_, endpoint());
  const std::string other = RandomBytes(1000, 5);
  const protocol::ReadyReply held = raw.Begin("node2a/other", other, Xxh3(other));  // takes the only place
  UploadSettings settings = TestUploadSettings();
  std::vector<std::string> failures;
  settings.on_retry = [&](int next_attempt, const Status& failure) {
    EXPECT_EQ(next_attempt, 2);
    failures.push_back(failure.message());
    // The other upload ends (committed short, it fails) and frees the place before the retry.
    raw.Commit(held.token);
    EXPECT_THAT(raw.ReceiveError().message, HasSubstr("truncated upload"));
  };
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/busy", settings, &outcome);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(outcome.attempts, 2);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0], "failed waiting for the node's reply to BEGIN: busy: 1 upload in progress, retry later");
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
}

TEST_F(UploadBatchTest, NodeBusyAtEveryAttemptFailsAfterTheConfiguredAttempts) {
  WriteZip("batch.zip", 300 * 1024);
  ReceiverSettings receiver_settings = Settings();
  receiver_settings.max_open_uploads = 1;
  StartReceiver(receiver_settings);
  RawSender raw(context_, endpoint());
  const std::string other = RandomBytes(1000, 6);
  raw.Begin("node2a/other", other, Xxh3(other));
  UploadSettings settings = TestUploadSettings();
  settings.send_part_attempts = 3;
  int retries = 0;
  settings.on_retry = [&](int, const Status&) { ++retries; };
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/busy", settings, &outcome);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_EQ(status.message(),
            "failed after 3 attempts (request_timeout 5000 ms) waiting for the node's reply to BEGIN: busy: 1 upload "
            "in progress, retry later");
  EXPECT_EQ(outcome.attempts, 3);
  EXPECT_EQ(retries, 2);
  EXPECT_EQ(outcome.bytes_sent, 0u);
  EXPECT_TRUE(sink_.staged().empty());
}

// A "node" on a raw ROUTER that answers the sender's BEGIN with `ready`: what a broken or hostile node may say.
Status UploadAgainstReady(zmq::context_t& context, const std::string& zip_path, const protocol::ReadyReply& ready,
                          UploadOutcome* outcome) {
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  UploadSettings settings = TestUploadSettings();
  settings.chunk_size = 0;  // take READY's
  settings.send_part_attempts = 1;
  auto upload = std::async(std::launch::async, [&] {
    return UploadBatch(context, {"node1", endpoint}, zip_path, "node1a/ready", settings, outcome);
  });
  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::duration_cast<std::chrono::milliseconds>(kTestDeadline));
  std::vector<zmq::message_t> frames;
  if ((item.revents & ZMQ_POLLIN) == 0 || !zmq::recv_multipart(router, std::back_inserter(frames)) ||
      frames.size() != 3) {
    ADD_FAILURE() << "no BEGIN from the sender";
    return upload.get();
  }
  protocol::Header header;
  EXPECT_TRUE(protocol::DecodeHeader(frames[1].to_string_view(), &header).ok());
  EXPECT_EQ(header.command, static_cast<uint16_t>(protocol::Command::kBegin));
  router.send(frames[0], zmq::send_flags::sndmore);
  router.send(zmq::buffer(protocol::EncodeHeader(protocol::Command::kReady, header.request_id)),
              zmq::send_flags::sndmore);
  router.send(zmq::buffer(protocol::EncodeReady(ready)), zmq::send_flags::none);
  return upload.get();
}

TEST_F(UploadBatchTest, ReadyWithAChunkSizeOutOfBoundsIsAProtocolError) {
  WriteZip("batch.zip", 1000);
  for (uint32_t chunk_size : {0u, protocol::kMaxUploadChunkSize + 1, 0xffffffffu}) {
    UploadOutcome outcome;
    Status status = UploadAgainstReady(context_, dir_ / "batch.zip", {Token{0, 7}, 0, chunk_size, 8}, &outcome);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << chunk_size;
    EXPECT_EQ(status.message(), "bad reply from the node: READY with chunk size " + std::to_string(chunk_size) +
                                    " (must be 1 to 16777216 bytes)");
    EXPECT_EQ(outcome.attempts, 1);
    EXPECT_EQ(outcome.bytes_sent, 0u);
  }
  UploadOutcome outcome;
  Status status = UploadAgainstReady(context_, dir_ / "batch.zip", {Token{0, 7}, 1001, 1024, 8}, &outcome);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "bad reply from the node: READY with resume offset 1001 for a zip of 1000 bytes");
}

TEST_F(UploadBatchTest, SenderWithoutAChunkSizeTakesTheNodesMaximum) {
  const std::string contents = WriteZip("batch.zip", protocol::kMaxUploadChunkSize + 100);
  ReceiverSettings receiver_settings = Settings();
  receiver_settings.chunk_size = 64u << 20;  // lowered to the maximum
  StartReceiver(receiver_settings);
  UploadSettings settings = TestUploadSettings();
  settings.chunk_size = 0;
  std::vector<uint64_t> progress;
  UploadOutcome outcome;
  Status status = UploadBatch(context_, {"node1", endpoint()}, dir_ / "batch.zip", "node1a/max-chunk", settings,
                              &outcome, [&](uint64_t acked) { progress.push_back(acked); });
  ASSERT_TRUE(status.ok()) << status.message();
  // Two chunks: 16 MiB, then 100 bytes.
  EXPECT_EQ(progress, (std::vector<uint64_t>{0, protocol::kMaxUploadChunkSize, protocol::kMaxUploadChunkSize + 100}));
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
}

}  // namespace
}  // namespace planb::testing
