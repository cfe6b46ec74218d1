#include "host/storage/shard_space.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/map_fixture.h"
#include "support/test_env.h"
#include "tests/host/storage/shard_loads.h"

namespace planb {
namespace {

using ::planb::testing::LoadAndMerge;
using ::planb::testing::MeasureMap;
using ::planb::testing::NumberedRows;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

class ShardSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

// The accounting of LMDB's mdb_stat -f: every page up to the last one written is a meta page, a page of a tree
// (free list, main table, named tables) or listed free.
void ExpectEveryPageAccountedFor(const ShardSpace& space) {
  EXPECT_EQ(space.used_pages + space.listed_free_pages, space.last_page + 1);
  EXPECT_EQ(space.file_pages * space.page_size, space.file_bytes);
  EXPECT_GE(space.free_share, 0.0);
  EXPECT_LT(space.free_share, 1.0);
}

TEST_F(ShardSpaceTest, CountsRowsAndAccountsForEveryPage) {
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(500, "first-")).ok());
  ShardSpace space;
  const Status s = MeasureMap(*runtime_, "m", &space);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(space.rows, 500u);
  EXPECT_GT(space.page_size, 0u);
  ExpectEveryPageAccountedFor(space);
}

TEST_F(ShardSpaceTest, RewritingRowsLeavesFreePagesThatTheShareCounts) {
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(2000, "first-")).ok());
  ShardSpace first;
  ASSERT_TRUE(MeasureMap(*runtime_, "m", &first).ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(2000, "again-" + std::to_string(i))).ok());
  ShardSpace later;
  const Status s = MeasureMap(*runtime_, "m", &later);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(later.rows, 2000u);
  ExpectEveryPageAccountedFor(later);
  EXPECT_GT(later.listed_free_pages, 0u);
  EXPECT_GT(later.free_share, first.free_share);
  EXPECT_NEAR(later.free_share, static_cast<double>(later.file_pages - later.used_pages) / later.file_pages, 1e-12);
}

}  // namespace
}  // namespace planb
