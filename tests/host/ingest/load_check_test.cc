// CheckLoadLocally's disk check keeps the margin the node's other writes keep (review of issue 11): a load PREPARE
// finds room for must also find it at BEGIN and when its batches are unpacked, or the load fails midway.
#include "host/ingest/load_check.h"

#include <gtest/gtest.h>

#include <memory>

#include "host/common/disk_room.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::TempDir;

class LoadCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A max_store_size larger than any disk, so that only the disk check can refuse.
    const Status s = OpenTestRuntime(dir_.path(), "[map.m]\ntype = state\nmax_store_size = 16TiB\n", &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  protocol::PrepareReply Check(uint64_t bytes) {
    protocol::PrepareReply reply;
    EXPECT_TRUE(CheckLoadLocally(*runtime_, protocol::PrepareRequest{{{"m", bytes}}}, &reply).ok());
    EXPECT_EQ(reply.maps.size(), 1u);
    return reply;
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(LoadCheckTest, ALoadThatFitsAboveTheMarginIsOk) {
  EXPECT_EQ(Check(1 << 20).maps[0].verdict, protocol::PrepareVerdict::kOk) << Check(1 << 20).maps[0].message;
}

TEST_F(LoadCheckTest, ALoadThatFitsTheFreeSpaceButNotAboveTheMarginIsRefused) {
  const DiskRoom room = MeasureDiskRoom(runtime_->home().root());
  ASSERT_TRUE(room.known);
  ASSERT_GT(room.free_bytes, room.margin);
  // Staged and unpacked, the load takes twice its bytes: half a margin below the free space.
  const protocol::PrepareReply reply = Check((room.free_bytes - room.margin / 2) / 2);
  EXPECT_EQ(reply.maps[0].verdict, protocol::PrepareVerdict::kNoDiskSpace);
  EXPECT_NE(reply.maps[0].message.find("and keeps " + std::to_string(room.margin) + " free (the larger of "),
            std::string::npos)
      << reply.maps[0].message;
}

}  // namespace
}  // namespace planb
