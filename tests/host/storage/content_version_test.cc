#include "host/storage/content_version.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::TempDir;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

uint64_t Hash(const std::string& id) { return XXH3_64bits(id.data(), id.size()); }

// A real LMDB environment with a "meta" and a "batches" table, as a shard has them.
class VersionedEnv {
 public:
  explicit VersionedEnv(const std::string& dir) {
    Env::Options options;
    options.map_size = size_t{16} << 20;
    Status s = env_.Open(dir, options);
    EXPECT_TRUE(s.ok()) << s.message();
    Txn txn;
    EXPECT_TRUE(txn.Begin(env_.get(), 0).ok());
    EXPECT_TRUE(txn.OpenDbi("meta", MDB_CREATE, &meta_).ok());
    EXPECT_TRUE(txn.OpenDbi(kBatchesTableName, MDB_CREATE, &batches_).ok());
    EXPECT_TRUE(txn.Commit().ok());
  }

  // Records each id in a transaction of its own; returns how many were counted.
  int Record(const std::vector<std::string>& ids, int64_t now_ms = 1000) {
    int counted_total = 0;
    for (const std::string& id : ids) {
      Txn txn;
      EXPECT_TRUE(txn.Begin(env_.get(), 0).ok());
      bool counted = false;
      const Status s = RecordMergedBatch(txn.get(), meta_, batches_, id, now_ms, &counted);
      EXPECT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(txn.Commit().ok());
      counted_total += counted ? 1 : 0;
    }
    return counted_total;
  }

  ContentVersion Version() {
    Txn txn;
    EXPECT_TRUE(txn.Begin(env_.get(), MDB_RDONLY).ok());
    ContentVersion version;
    const Status s = ReadContentVersion(txn.get(), meta_, &version);
    EXPECT_TRUE(s.ok()) << s.message();
    return version;
  }

  // The merge time recorded for `id`, or -1.
  int64_t MergeTime(const std::string& id) {
    Txn txn;
    EXPECT_TRUE(txn.Begin(env_.get(), MDB_RDONLY).ok());
    Bytes value;
    if (!txn.Get(batches_, Bytes(id), &value) || value.size != 8) return -1;
    return static_cast<int64_t>(GetU64(value.data));
  }

  MDB_env* env() const { return env_.get(); }
  MDB_dbi meta() const { return meta_; }
  MDB_dbi batches() const { return batches_; }

 private:
  Env env_;
  MDB_dbi meta_ = 0;
  MDB_dbi batches_ = 0;
};

TEST(ContentVersion, ToStringAndParseRoundTrip) {
  const std::vector<ContentVersion> versions = {{0, 0}, {12, 0x00ab34cd56ef7890ull}, {UINT64_MAX, UINT64_MAX}};
  for (const ContentVersion& v : versions) {
    ContentVersion parsed{7, 7};
    ASSERT_TRUE(ContentVersion::Parse(v.ToString(), &parsed)) << v.ToString();
    EXPECT_EQ(parsed, v);
  }
  EXPECT_EQ((ContentVersion{12, 0x00ab34cd56ef7890ull}.ToString()), "12 00ab34cd56ef7890");
  EXPECT_EQ(ContentVersion().ToString(), "0 0000000000000000");
  EXPECT_EQ((ContentVersion{UINT64_MAX, 1}.ToString()), "18446744073709551615 0000000000000001");
  EXPECT_TRUE(ContentVersion().empty());
  EXPECT_FALSE((ContentVersion{0, 1}).empty());
  EXPECT_NE((ContentVersion{1, 2}), (ContentVersion{1, 3}));
  EXPECT_NE((ContentVersion{1, 2}), (ContentVersion{2, 2}));
}

TEST(ContentVersion, ParseRefusesMalformedTextAndLeavesTheOutputAlone) {
  const std::vector<std::string> bad = {
      "",
      "12",
      "12 ",
      " 12 00ab34cd56ef7890",
      "12  00ab34cd56ef7890",
      "12 00ab34cd56ef7890 ",
      "12 00ab34cd56ef7890\n",
      "12 00AB34CD56EF7890",   // upper case hex
      "12 00ab34cd56ef789",    // 15 digits
      "12 00ab34cd56ef78901",  // 17 digits
      "12 00ab34cd56ef789g",
      "x 00ab34cd56ef7890",
      "-1 00ab34cd56ef7890",
      "+1 00ab34cd56ef7890",
      "1.5 00ab34cd56ef7890",
      "18446744073709551616 00ab34cd56ef7890",  // one past UINT64_MAX
      "99999999999999999999 00ab34cd56ef7890",
      "12\t00ab34cd56ef7890",
  };
  for (const std::string& text : bad) {
    ContentVersion out{5, 6};
    EXPECT_FALSE(ContentVersion::Parse(text, &out)) << "'" << text << "'";
    EXPECT_EQ(out, (ContentVersion{5, 6})) << "'" << text << "'";
  }
}

TEST(ContentVersion, AbsentVersionReadsAsEmpty) {
  TempDir dir;
  VersionedEnv env(dir.path());
  EXPECT_EQ(env.Version(), ContentVersion());
}

TEST(ContentVersion, CorruptVersionTextIsRefusedNamingIt) {
  TempDir dir;
  VersionedEnv env(dir.path());
  Txn txn;
  ASSERT_TRUE(txn.Begin(env.env(), 0).ok());
  ASSERT_TRUE(txn.Put(env.meta(), Bytes(std::string(kContentVersionKey)), Bytes(std::string("3 not-hex"))).ok());
  ContentVersion version{9, 9};
  const Status s = ReadContentVersion(txn.get(), env.meta(), &version);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_TRUE(Contains(s.message(), "content_version '3 not-hex'")) << s.message();
}

TEST(ContentVersion, CountsEachBatchOnceAndXorsTheHashesOfTheirIds) {
  TempDir dir;
  VersionedEnv env(dir.path());
  EXPECT_EQ(env.Record({"node1/a"}, 111), 1);
  EXPECT_EQ(env.Version(), (ContentVersion{1, Hash("node1/a")}));
  EXPECT_EQ(env.MergeTime("node1/a"), 111);
  EXPECT_EQ(env.Record({"node1/b"}, 222), 1);
  const ContentVersion two{2, Hash("node1/a") ^ Hash("node1/b")};
  EXPECT_EQ(env.Version(), two);

  // A batch merged again (after a crash, or delivered twice) changes nothing, not even its merge time.
  EXPECT_EQ(env.Record({"node1/a", "node1/b"}, 333), 0);
  EXPECT_EQ(env.Version(), two);
  EXPECT_EQ(env.MergeTime("node1/a"), 111);
  EXPECT_EQ(env.MergeTime("node1/b"), 222);
}

TEST(ContentVersion, TheSameBatchesInAnotherOrderGiveTheSameVersion) {
  TempDir one_dir, other_dir, third_dir;
  VersionedEnv one(one_dir.path()), other(other_dir.path()), third(third_dir.path());
  one.Record({"n/1", "n/2", "n/3"}, 1);
  other.Record({"n/3", "n/1", "n/2", "n/1"}, 2);
  EXPECT_EQ(one.Version(), other.Version());
  third.Record({"n/1", "n/2", "n/4"});
  EXPECT_NE(one.Version(), third.Version());
  EXPECT_EQ(one.Version().batches, third.Version().batches);
}

TEST(ContentVersion, AnAbortedTransactionLeavesTheVersionAsItWas) {
  TempDir dir;
  VersionedEnv env(dir.path());
  env.Record({"n/1"});
  const ContentVersion before = env.Version();
  {
    Txn txn;
    ASSERT_TRUE(txn.Begin(env.env(), 0).ok());
    bool counted = false;
    ASSERT_TRUE(RecordMergedBatch(txn.get(), env.meta(), env.batches(), "n/2", 5, &counted).ok());
    EXPECT_TRUE(counted);
    ContentVersion inside;
    ASSERT_TRUE(ReadContentVersion(txn.get(), env.meta(), &inside).ok());
    EXPECT_EQ(inside.batches, 2u);
  }  // aborted
  EXPECT_EQ(env.Version(), before);
  EXPECT_EQ(env.MergeTime("n/2"), -1);
}

TEST(ContentVersion, RefusesAnEmptyOrOverlongBatchId) {
  TempDir dir;
  VersionedEnv env(dir.path());
  Txn txn;
  ASSERT_TRUE(txn.Begin(env.env(), 0).ok());
  bool counted = true;
  Status s = RecordMergedBatch(txn.get(), env.meta(), env.batches(), "", 1, &counted);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "without a batch id")) << s.message();
  EXPECT_FALSE(counted);
  s = RecordMergedBatch(txn.get(), env.meta(), env.batches(), std::string(512, 'x'), 1, &counted);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "longer than 511 bytes")) << s.message();
  s = RecordMergedBatch(txn.get(), env.meta(), env.batches(), std::string(511, 'x'), 1, &counted);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(counted);
}

// Prunes in a write transaction of its own; returns the number pruned (or -1 on an error).
int64_t Prune(VersionedEnv& env, const std::set<std::string, std::less<>>& keep, int64_t before_ms) {
  Txn txn;
  EXPECT_TRUE(txn.Begin(env.env(), 0).ok());
  uint64_t pruned = 0;
  const Status s = PruneMergedBatches(txn.get(), env.meta(), env.batches(), keep, before_ms, &pruned);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return -1;
  EXPECT_TRUE(txn.Commit().ok());
  return static_cast<int64_t>(pruned);
}

TEST(ContentVersion, PruningDropsOldRowsButKeepsTheVersionRecentRowsAndKeptIds) {
  TempDir dir;
  VersionedEnv env(dir.path());
  ASSERT_EQ(env.Record({"n/1", "n/2", "n/3"}, 1000), 3);
  ASSERT_EQ(env.Record({"n/4"}, 5999), 1);
  ASSERT_EQ(env.Record({"n/5"}, 6000), 1);
  const ContentVersion before = env.Version();
  EXPECT_EQ(Prune(env, {"n/2"}, 6000), 3);
  EXPECT_EQ(env.Version(), before);
  EXPECT_EQ(env.MergeTime("n/1"), -1);
  EXPECT_EQ(env.MergeTime("n/2"), 1000);  // still staged or quarantined somewhere: kept whatever its age
  EXPECT_EQ(env.MergeTime("n/3"), -1);
  EXPECT_EQ(env.MergeTime("n/4"), -1);
  EXPECT_EQ(env.MergeTime("n/5"), 6000);  // the boundary: merged at before_ms is not before it
  // Merged again: kept and recent batches are still recognised, so the version does not move.
  EXPECT_EQ(env.Record({"n/2", "n/5"}, 7000), 0);
  EXPECT_EQ(env.Version(), before);
  // A pruned batch is not (the reason for the window): it would count again.
  EXPECT_EQ(env.Record({"n/1"}, 7000), 1);
  EXPECT_NE(env.Version(), before);
}

TEST(ContentVersion, PruningEveryRowAndTimesAroundZero) {
  TempDir dir;
  VersionedEnv env(dir.path());
  ASSERT_EQ(env.Record({"a/1"}, -5), 1);
  ASSERT_EQ(env.Record({"a/2", "a/3", "a/4"}, 0), 3);
  const ContentVersion before = env.Version();
  EXPECT_EQ(Prune(env, {}, -5), 0);
  EXPECT_EQ(Prune(env, {}, 0), 1);  // merged at -5: before the epoch, before 0
  EXPECT_EQ(env.MergeTime("a/2"), 0);
  EXPECT_EQ(Prune(env, {"not/merged"}, INT64_MAX), 3);  // consecutive deletions up to the last row
  EXPECT_EQ(Prune(env, {}, INT64_MAX), 0);
  EXPECT_EQ(env.Version(), before);
}

TEST(ContentVersion, PruningRefusesAMalformedMergeTimeNamingTheBatch) {
  TempDir dir;
  VersionedEnv env(dir.path());
  ASSERT_EQ(env.Record({"b/1"}, 1), 1);
  {
    Txn txn;
    ASSERT_TRUE(txn.Begin(env.env(), 0).ok());
    ASSERT_TRUE(txn.Put(env.batches(), Bytes(std::string("b/2\n")), Bytes(std::string("abc"))).ok());
    ASSERT_TRUE(txn.Commit().ok());
  }
  Txn txn;
  ASSERT_TRUE(txn.Begin(env.env(), 0).ok());
  uint64_t pruned = 0;
  const Status s = PruneMergedBatches(txn.get(), env.meta(), env.batches(), {}, 100, &pruned);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_TRUE(Contains(s.message(), "batch b/2\\n has a merge time of 3 bytes")) << s.message();
  txn.Abort();
  EXPECT_EQ(env.MergeTime("b/1"), 1);  // the caller aborts: nothing pruned
}

}  // namespace
}  // namespace planb
