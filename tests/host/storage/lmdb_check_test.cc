// The page walk and free-list check of LMDB files from outside (lmdb_check.h, lmdb_pages.h), through the forked
// verifier (lmdb_verifier.h) as uploads and snapshots use it.
#include "host/storage/lmdb_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/stream_writer.h"
#include "host/storage/lmdb_verifier.h"
#include "support/map_fixture.h"
#include "support/test_env.h"
#include "tests/host/storage/free_list_forgery.h"

namespace planb {
namespace {

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class LmdbCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(OpenTestRuntime(dir_ / "node", StateMapSection("m", "hashed"), &runtime_).ok());
    StreamWriter writer(runtime_->catalog(), batch_);
    for (int i = 0; i < 20000; ++i) {
      ASSERT_TRUE(writer.Add("m", StateRecord("key-" + std::to_string(i), "value " + std::to_string(i))).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
    ASSERT_EQ(testing::DeleteSomeRows(map_dir(), "data"), "");
  }

  std::string map_dir() const { return batch_ + "/m"; }
  Status Verify() { return VerifyExtractedBatch(runtime_->catalog(), "upload.zip", batch_, {"m"}); }

  std::vector<uint64_t> FreeList() {
    std::vector<uint64_t> free_list;
    uint64_t live = 0;
    EXPECT_EQ(testing::ReadFreeListAndLivePage(map_dir(), "data", &free_list, &live), "");
    return free_list;
  }

  TempDir dir_;
  std::string batch_ = dir_ / "batch";
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(LmdbCheckTest, FileWithAFreeListPasses) {
  EXPECT_FALSE(FreeList().empty());
  const Status s = Verify();
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(CheckLmdbFile(map_dir()).ok());
}

// Issue 11, defect 1: a free list naming a page the data table uses passed the verifier (which walked only the
// rows), and the merge's first write transaction then died on an LMDB assertion in mdb_page_touch.
TEST_F(LmdbCheckTest, RefusesFreeListNamingALivePage) {
  uint64_t live = 0;
  ASSERT_EQ(testing::ForgeFreeListOntoLivePage(map_dir(), "data", &live), "");
  const Status s = Verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), "upload.zip: map 'm': free list: lists page " + std::to_string(live) +
                                        ", which is in use by a table"))
      << s.message();
}

TEST_F(LmdbCheckTest, RefusesFreeListListingAPageTwice) {
  const std::vector<uint64_t> free_list = FreeList();
  ASSERT_GE(free_list.size(), 2u);
  ASSERT_EQ(testing::PatchFreeList(map_dir(), free_list, 1, free_list[0]), "");
  const Status s = Verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), "free list: lists page " + std::to_string(free_list[0]) + " twice"))
      << s.message();
}

TEST_F(LmdbCheckTest, RefusesFreeListPageOutsideTheFile) {
  const std::vector<uint64_t> free_list = FreeList();
  ASSERT_FALSE(free_list.empty());
  ASSERT_EQ(testing::PatchFreeList(map_dir(), free_list, 0, uint64_t{1} << 40), "");
  const Status s = Verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), "free list: lists page 1099511627776, outside the file's ")) << s.message();
}

// Review of issue 11: with both meta pages at the same transaction id LMDB reads meta 0, and so must the walk. Meta
// 1 is given meta 0's transaction id and a free list rooted outside the file: LMDB never reads it, so the file is
// sound; a walk of meta 1 would refuse it (and, forged the other way round, pass a bad meta 0).
TEST_F(LmdbCheckTest, ATieBetweenTheMetaPagesIsReadAsLmdbReadsIt) {
  const std::string data_path = map_dir() + "/data.mdb";
  auto u64 = [&](const std::string& data, size_t at) {
    uint64_t value;
    std::memcpy(&value, data.data() + at, 8);
    return value;
  };
  constexpr size_t kTxnid = 16 + 128;
  constexpr size_t kFreeRoot = 16 + 24 + 40;
  std::string data = testing::ReadFile(data_path);
  if (u64(data, 4096 + kTxnid) > u64(data, kTxnid)) {
    // Make meta 0 the current one: rewrite one row as it is, which commits through the other meta page.
    ASSERT_EQ(testing::RewriteFirstRow(map_dir(), "data"), "");
    data = testing::ReadFile(data_path);
  }
  ASSERT_GT(u64(data, kTxnid), u64(data, 4096 + kTxnid));
  const uint64_t txnid = u64(data, kTxnid);
  const uint64_t outside = data.size() / 4096 + 100;
  std::memcpy(&data[4096 + kTxnid], &txnid, 8);
  std::memcpy(&data[4096 + kFreeRoot], &outside, 8);
  testing::WriteFile(data_path, data);
  const Status s = CheckLmdbFile(map_dir());
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace
}  // namespace planb
