// A single-node load succeeds only when every stream it staged merged (review of issue 11): a stream whose batch
// failed, was quarantined or was held back behind another batch fails the load (exit 2) naming the file and why,
// and the per-stream outcome says exactly which batches merged (other maps merge past a failed batch).
// Real processes (the planb binary) on real homes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "host/cli/cli_test_env.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/transfer/batch_zip.h"
#include "support/map_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::CliEnv;
using ::planb::testing::ProcessResult;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kConfig[] =
    "[map.a]\ntype = state\nscheme = hashed\nmax_store_size = 1MiB\n"
    "[map.b]\ntype = state\nscheme = hashed\n";

// `count` records of 100-byte values under keys prefix0, prefix1, ...
std::string Values(const std::string& map, const std::string& prefix, int count) {
  std::string body;
  for (int i = 0; i < count; ++i) body += Ref(map, prefix + std::to_string(i), std::string(100, 'x')) + "\n";
  return ReferenceData(body);
}

// Stages in `env`'s home, ahead of any load, a batch of map a written under the direct scheme (the node's config
// says hashed): its merge fails every time, because of its contents.
uint64_t StageForeignBatch(const CliEnv& env) {
  TempDir writer_dir;
  std::unique_ptr<Runtime> writer_runtime;
  EXPECT_TRUE(planb::testing::OpenTestRuntime(writer_dir.path(), "[map.a]\ntype = state\nscheme = direct\n",
                                              &writer_runtime)
                  .ok());
  StreamWriter writer(writer_runtime->catalog(), writer_dir / "stream");
  EXPECT_TRUE(writer.Add("a", StateRecord("k1", "foreign")).ok());
  EXPECT_TRUE(writer.Finish().ok());
  const std::string zip = env.dir() + "/foreign.zip";
  EXPECT_TRUE(ZipBatch(writer_dir / "stream", zip, ZipOptions{true, "peer/foreign"}).ok());
  std::unique_ptr<Runtime> node;
  EXPECT_TRUE(planb::testing::OpenTestRuntime(env.dir(), kConfig, &node).ok());  // env's own home and config
  uint64_t sequence = 0;
  EXPECT_TRUE(StagingStore(node->home()).Stage(zip, &sequence).ok());
  return sequence;
}

bool StagingHoldsABatch(const CliEnv& env) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(env.home() + "/staging", ec)) {
    if (entry.path().extension() == ".zip") return true;
  }
  return false;
}

// The scenario: a batch of a fails 3 times across 3 loads and is quarantined by the 3rd. Every load of a
// stages a batch that is held back behind it: none merges, so none may say it succeeded. Once the batch is in
// quarantine/, a load of a is refused before it stages anything, saying how to release the map (issue 40).
TEST(LoadOutcome, ALoadHeldBehindAFailingOrQuarantinedBatchFailsNamingTheFileAndWhy) {
  CliEnv env(kConfig);
  const std::string file = env.Write("a.xml", ReferenceData(Ref("a", "k1", "mine")));
  const uint64_t foreign = StageForeignBatch(env);
  const std::string foreign_name = StagingStore::BatchFileName(foreign);
  const std::string quarantined = env.home() + "/quarantine/" + foreign_name;
  for (int load = 1; load <= kMaxMergeAttempts; ++load) {
    SCOPED_TRACE("load " + std::to_string(load));
    const ProcessResult r = env.Load({file});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.out, Not(HasSubstr("merged 0 batch(es)")));
    EXPECT_THAT(r.out, HasSubstr(file + ": staged as batch " + std::to_string(foreign + load) + ", not merged"));
    const std::string held = file + " (batch " + std::to_string(foreign + load) + "): held back: map a is blocked by ";
    if (load < kMaxMergeAttempts) {
      EXPECT_THAT(r.err, HasSubstr(held + "batch " + foreign_name + ", whose merge is failing"));
    } else {  // this run quarantined it
      EXPECT_THAT(r.err, HasSubstr(held + "quarantined batch " + quarantined));
      EXPECT_THAT(r.err, HasSubstr("mv " + quarantined + " " + env.home() + "/staging/"));
    }
  }
  EXPECT_TRUE(fs::exists(quarantined));
  const ProcessResult refused = env.Load({file});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_THAT(refused.err, HasSubstr("nothing was staged or merged"));
  EXPECT_THAT(refused.err, HasSubstr("map 'a' is held back behind quarantined batch " + quarantined));
  EXPECT_THAT(env.Lookup("a", "k1").err, HasSubstr("map a has no data on this node"));  // nothing merged
}

// Issue 40: a load into a map held back by a quarantined batch used to stage a batch that could not merge. It
// fails (exit 2) naming the map, the batch and the commands that release it, and stages nothing; --no-wait
// stages it behind the batch, saying so, and it merges once the batch is released.
TEST(LoadOutcome, ALoadIntoAMapHeldBackByAQuarantinedBatchFailsUnlessNoWait) {
  CliEnv env(kConfig);
  const std::string a = env.Write("a.xml", ReferenceData(Ref("a", "k1", "mine")));
  const std::string b = env.Write("b.xml", ReferenceData(Ref("b", "k1", "v1")));
  const std::string foreign_name = StagingStore::BatchFileName(StageForeignBatch(env));
  // Every merge run tries the foreign batch: loads of b quarantine it after kMaxMergeAttempts failures.
  for (int load = 1; load <= kMaxMergeAttempts; ++load) ASSERT_EQ(env.Load({b}).exit_code, 0);
  const std::string quarantined = env.home() + "/quarantine/" + foreign_name;
  ASSERT_TRUE(fs::exists(quarantined));
  ASSERT_FALSE(StagingHoldsABatch(env));

  const ProcessResult r = env.Load({a});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("content version of a")));
  EXPECT_THAT(r.err, HasSubstr("planb: load failed, nothing was staged or merged"));
  EXPECT_THAT(r.err, HasSubstr("map 'a' is held back behind quarantined batch " + quarantined +
                               " (merge failed 3 times; last: "));
  EXPECT_THAT(r.err, HasSubstr("to release it, fix its cause and move it back: mv " + quarantined + " " +
                               env.home() + "/staging/"));
  EXPECT_THAT(r.err, HasSubstr("or drop it: rm " + quarantined + " " + quarantined + ".reason"));
  EXPECT_THAT(r.err, HasSubstr("load --no-wait stages it anyway"));
  EXPECT_FALSE(StagingHoldsABatch(env));
  EXPECT_EQ(env.Load({b}).exit_code, 0);  // maps of no quarantined batch load as before
  // A deletion would wait behind it just the same: asked first like a load, it stages nothing.
  const ProcessResult deletion = env.Run({"delete", "a", "--all"});
  EXPECT_EQ(deletion.exit_code, 2) << deletion.out;
  EXPECT_THAT(deletion.err, HasSubstr("map 'a' is held back behind quarantined batch " + quarantined));
  EXPECT_FALSE(StagingHoldsABatch(env));

  const ProcessResult staged = env.Load({"--no-wait", a});
  EXPECT_EQ(staged.exit_code, 0) << staged.err;
  EXPECT_THAT(staged.err, HasSubstr("planb: note: " + a + " (batch "));
  EXPECT_THAT(staged.err, HasSubstr("staged, not merged: held back: map a is blocked by quarantined batch " +
                                    quarantined));
  EXPECT_TRUE(StagingHoldsABatch(env));
  EXPECT_THAT(env.Lookup("a", "k1").err, HasSubstr("map a has no data on this node"));

  // Dropping the quarantined batch, as the hint says, releases the map: the next merge run takes the held batch.
  ASSERT_TRUE(fs::remove(quarantined));
  ASSERT_TRUE(fs::remove(quarantined + ".reason"));
  EXPECT_EQ(env.Load({b}).exit_code, 0);
  EXPECT_FALSE(StagingHoldsABatch(env));
  EXPECT_EQ(env.Lookup("a", "k1").out, "mine\n");
}

// The batch of the first load is the one failing: that load says why; the loads after it are held back behind
// it, and the one whose run quarantines it says so too.
TEST(LoadOutcome, LoadsBehindABatchThatOverflowsTheMapFailUntilItIsQuarantinedAndSaySo) {
  CliEnv env(kConfig);
  // a's shard a third full; the second file passes the load's room check (the shard's pages plus half again
  // the batch) but its keys fall between the first file's, so the merge splits pages and needs more: the map
  // is full at the commit. The batch is too big for the map: that counts against the batch.
  ASSERT_EQ(env.Load({env.Write("a1.xml", Values("a", "k", 2000))}).exit_code, 0);
  const std::string file = env.Write("a2.xml", Values("a", "m", 2000));
  const std::string overflowing = StagingStore::BatchFileName(2);
  for (int load = 1; load <= kMaxMergeAttempts; ++load) {
    SCOPED_TRACE("load " + std::to_string(load));
    const ProcessResult r = env.Load({file});
    ASSERT_EQ(r.exit_code, 2) << "the merge did not run out of room: " << r.out;
    if (load == 1) {
      EXPECT_THAT(r.err, HasSubstr(file + " (batch 2): its merge failed"));
      EXPECT_THAT(r.err, HasSubstr("raise max_store_size in [map.a]"));
      // Issue 40: which file, which limit (the merge's MDB_MAP_FULL said no more than LMDB's text).
      EXPECT_THAT(r.err, HasSubstr("map a: the shard " + env.home() + "/shards/a/data.mdb is full: it reached "
                                   "max_store_size = 1MiB (1048576 bytes"));
      continue;
    }
    EXPECT_THAT(r.err, HasSubstr(file + " (batch " + std::to_string(load + 1) + "): held back: map a is blocked by "
                                 + (load < kMaxMergeAttempts ? "batch " : "quarantined batch " + env.home() +
                                                                              "/quarantine/") + overflowing));
    EXPECT_THAT(r.err, HasSubstr("planb: note: earlier staged batch " + overflowing +
                                 (load < kMaxMergeAttempts ? " did not merge: " : " was quarantined: ")));
  }
  EXPECT_TRUE(fs::exists(env.home() + "/quarantine/" + overflowing));
}

// Other maps merge past a failed batch: the outcome must say which streams merged, not assume order.
TEST(LoadOutcome, AStreamThatFailedIsNotReportedMergedWhenALaterStreamOfAnotherMapMerged) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("a1.xml", Values("a", "k", 2000))}).exit_code, 0);
  const std::string a2 = env.Write("a2.xml", Values("a", "m", 2000));
  const std::string b = env.Write("b.xml", ReferenceData(Ref("b", "k1", "v1")));
  const ProcessResult r = env.Load({a2, b});
  ASSERT_EQ(r.exit_code, 2) << "the merge did not run out of room: " << r.out;
  EXPECT_THAT(r.out, HasSubstr(a2 + ": staged as batch 2, not merged"));
  EXPECT_THAT(r.out, HasSubstr(b + ": staged as batch 3, merged"));
  EXPECT_THAT(r.err, HasSubstr(a2 + " (batch 2): its merge failed"));
  EXPECT_THAT(r.err, HasSubstr("MDB_MAP_FULL"));
  EXPECT_THAT(r.err, Not(HasSubstr(b + " (batch")));
  EXPECT_EQ(env.Lookup("b", "k1").out, "v1\n");
}

}  // namespace
}  // namespace planb
