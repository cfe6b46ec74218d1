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
  EXPECT_THAT(receiver_->Log(), HasSubstr("staged batch 1 from node1a/orders (" + std::to_string(contents.size())));
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

TEST_F(UploadBatchTest, NodeThatIsDownTimesOutAfterTheConfiguredAttempts) {
  WriteZip("batch.zip", 1000);
  UploadSettings settings = TestUploadSettings();
  settings.request_timeout_ms = 200;
  settings.send_part_attempts = 2;
  settings.retry_delay_ms = 10;
  int retries = 0;
  settings.on_retry = [&](int, const Status&) { ++retries; };
  UploadOutcome outcome;
  Status status = Upload("batch.zip", "node1a/orders", settings, &outcome, UnusedEndpoint(context_));
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_EQ(status.message(),
            "timed out after 2 attempts (request_timeout 200 ms) waiting for the node's reply to BEGIN");
  EXPECT_EQ(outcome.attempts, 2);
  EXPECT_EQ(retries, 1);
  EXPECT_EQ(outcome.bytes_sent, 0u);
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
  EXPECT_EQ(first_failure.message(), "timed out waiting for the node's reply to BEGIN");
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
  StartReceiver();
  {
    ScopedEnv fault("PLANB_FAULT", "receive.disk_full");
    UploadOutcome outcome;
    Status status = Upload("batch.zip", "node1a/full", TestUploadSettings(), &outcome);
    EXPECT_EQ(status.code(), Code::kFull);
    EXPECT_THAT(status.message(), HasSubstr("disk full writing " + receive_dir() + "/"));
    EXPECT_THAT(status.message(), HasSubstr(".part"));
    EXPECT_EQ(outcome.attempts, 1);
    EXPECT_TRUE(PartFiles(receive_dir()).empty());
    EXPECT_THAT(receiver_->Log(), HasSubstr("upload error for batch node1a/full: disk full writing"));
  }
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

}  // namespace
}  // namespace planb::testing
