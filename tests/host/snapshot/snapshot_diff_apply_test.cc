// ApplySnapshotDiff (host/snapshot/snapshot_diff_apply.h) on real shards and batch zips: a diff that checks out
// brings a copy of the snapshot held to the version offered; every way a diff can be wrong is refused naming the
// diff and what is wrong, and the snapshot held is never written.
#include "host/snapshot/snapshot_diff_apply.h"
#include "host/snapshot/unsynced_snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "host/transfer/batch_zip.h"
#include "host/transfer/snapshot_diff_file.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"
#include "support/snapshot_fixture.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class SnapshotDiffApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeShard(dir_ / "held-home", NumberedRows(0, 10), &held_, &held_version_).ok());
    std::string other;
    ContentVersion ignored;
    ASSERT_TRUE(MakeShard(dir_ / "new-home", NumberedRows(100, 5), &other, &ignored).ok());
    part_ = MakeSnapshotZip(dir_.path(), "m", other + "/data.mdb");  // batch id "snapshot/N"
    ASSERT_FALSE(part_.empty());
    std::string id;
    ASSERT_TRUE(ReadBatchId(part_, UnzipLimits(), &id).ok());
    part_id_ = id;
    ASSERT_TRUE(OpenTestRuntime(dir_ / "reader", StateMapSection("m", "hashed"), &runtime_).ok());
    ASSERT_TRUE(runtime_->catalog().Get("m", &plugins_).ok());
    held_bytes_ = Slurp(held_ + "/data.mdb");
  }
  ContentVersion After(const std::string& id) const {
    ContentVersion v = held_version_;
    v.batches += 1;
    v.digest ^= XXH3_64bits(id.data(), id.size());
    return v;
  }
  // A diff of `parts` named `ids` in its head, from `from` to what those ids give (or `to` when set).
  std::string WriteDiff(const std::string& map, const ContentVersion& from, const std::vector<std::string>& ids,
                        const std::vector<std::string>& parts) {
    DiffHead head;
    head.map = map;
    head.from = from;
    head.batch_ids = ids;
    head.to = from;
    for (const std::string& id : ids) {
      head.to.batches += 1;
      head.to.digest ^= XXH3_64bits(id.data(), id.size());
    }
    const std::string path = dir_ / ("d" + std::to_string(++diffs_) + ".diff");
    EXPECT_TRUE(WriteDiffFile(path, head, parts).ok());
    return path;
  }
  Status Apply(const std::string& diff, const ContentVersion& offered) {
    const std::string scratch = dir_ / ("scratch" + std::to_string(++applies_));
    fs::create_directories(scratch);
    scratch_ = scratch;
    return ApplySnapshotDiff(runtime_->catalog(), plugins_, diff, held_, held_version_, offered, scratch, &applied_);
  }

  TempDir dir_;
  std::string held_;
  ContentVersion held_version_;
  std::string held_bytes_;
  std::string part_;
  std::string part_id_;
  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<const MapPlugins> plugins_;
  std::string scratch_;
  AppliedDiff applied_;
  int diffs_ = 0;
  int applies_ = 0;
};

TEST_F(SnapshotDiffApplyTest, ADiffThatChecksOutGivesTheVersionOfferedWithTheNewRows) {
  const std::string diff = WriteDiff("m", held_version_, {part_id_}, {part_});
  const Status s = Apply(diff, After(part_id_));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(applied_.batches, 1u);
  EXPECT_EQ(applied_.rows_read, 5u);
  // Only the new snapshot's data.mdb and its mark of this boot (it is not synced) are left in the scratch: no lock
  // file, no parts.
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(scratch_)) left.push_back(e.path().lexically_relative(scratch_));
  EXPECT_THAT(left, ::testing::UnorderedElementsAre("m", "m/data.mdb", std::string("m/") + kUnsyncedBootFile));
  EXPECT_TRUE(CheckUnsyncedSnapshot(scratch_ + "/m").ok());
  std::shared_ptr<MapEnv> copy;
  ASSERT_TRUE(MapEnv::Open(scratch_ + "/m", plugins_, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &copy).ok());
  std::string value;
  EXPECT_EQ(GetValue(*copy, NumberedRows(100, 1)[0].first, &value), Code::kOk);
  EXPECT_EQ(value, NumberedRows(100, 1)[0].second);
  EXPECT_EQ(GetValue(*copy, NumberedRows(0, 1)[0].first, &value), Code::kOk);
  Txn txn;
  ASSERT_TRUE(txn.Begin(copy->env(), MDB_RDONLY).ok());
  ContentVersion version;
  ASSERT_TRUE(ReadContentVersion(txn.get(), copy->meta(), &version).ok());
  EXPECT_EQ(version, After(part_id_));
  EXPECT_EQ(Slurp(held_ + "/data.mdb"), held_bytes_);
}

TEST_F(SnapshotDiffApplyTest, ADiffThatDoesNotFitTheSnapshotHeldOrTheOfferIsRefused) {
  struct Case {
    std::string diff;
    ContentVersion offered;
    std::string message;
  };
  const ContentVersion elsewhere{held_version_.batches + 1, held_version_.digest ^ 1};
  const std::vector<Case> cases = {
      {WriteDiff("other", held_version_, {part_id_}, {part_}), After(part_id_), "a diff of map other, not of m"},
      {WriteDiff("m", elsewhere, {part_id_}, {part_}), After(part_id_), "a diff from content version"},
      {WriteDiff("m", held_version_, {part_id_}, {part_}), elsewhere, "but the offer said"},
      {WriteDiff("m", held_version_, {"another-id"}, {part_}), After("another-id"),
       "holds batch '" + part_id_ + "', the head names 'another-id'"},
  };
  for (const Case& c : cases) {
    const Status s = Apply(c.diff, c.offered);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_THAT(s.message(), HasSubstr(c.message));
    EXPECT_THAT(s.message(), HasSubstr(c.diff));
  }
  EXPECT_EQ(Slurp(held_ + "/data.mdb"), held_bytes_);
}

TEST_F(SnapshotDiffApplyTest, PartsThatAreNotThisMapsVerifiedBatchesAreRefused) {
  // Not a zip at all.
  const std::string junk = dir_ / "junk.zip";
  std::ofstream(junk) << "not a zip";
  Status s = Apply(WriteDiff("m", held_version_, {"junk-id"}, {junk}), After("junk-id"));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("part 1 of 1"));
  EXPECT_THAT(s.message(), HasSubstr("not a zip archive"));
  // A batch of another map (one this reader does not configure).
  std::string other;
  ContentVersion ignored;
  ASSERT_TRUE(MakeShard(dir_ / "x-home", NumberedRows(0, 2), &other, &ignored).ok());
  const std::string foreign = MakeSnapshotZip(dir_.path(), "x", other + "/data.mdb");
  std::string foreign_id;
  ASSERT_TRUE(ReadBatchId(foreign, UnzipLimits(), &foreign_id).ok());
  s = Apply(WriteDiff("m", held_version_, {foreign_id}, {foreign}), After(foreign_id));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("part 1 of 1"));
  // A part whose LMDB file is damaged: caught by the verifier in its child process.
  const std::string damaged_dir = dir_ / "damaged";
  fs::create_directories(damaged_dir + "/m");
  std::string bytes = Slurp(other + "/data.mdb");
  for (size_t i = 4096; i < bytes.size(); i += 97) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  std::ofstream(damaged_dir + "/m/data.mdb", std::ios::binary) << bytes;
  const std::string damaged = dir_ / "damaged.zip";
  ASSERT_TRUE(ZipBatch(damaged_dir, damaged, ZipOptions{true, "damaged-id"}).ok());
  s = Apply(WriteDiff("m", held_version_, {"damaged-id"}, {damaged}), After("damaged-id"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("part 1 of 1"));
  EXPECT_EQ(Slurp(held_ + "/data.mdb"), held_bytes_);
}

}  // namespace
}  // namespace planb::testing
