#include "host/storage/map_reader.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

class MapReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    Load({{"Paris", "France"}, {"Berlin", "Germany"}});
    s = runtime_->OpenShard("m", &shard_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = reader_.Open(shard_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void Load(const std::vector<std::pair<std::string, std::string>>& rows) {
    ASSERT_TRUE(StageRows(*runtime_, "m", rows).ok());
    MergeProcessor merger(*runtime_);
    MergeReport report;
    const Status s = merger.MergePending(&report);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::string Lookup(std::string_view key) {
    LookupKey lookup;
    lookup.key = Bytes(key);
    Row row;
    ErrorBuffer error;
    const Code code = reader_.Lookup(lookup, &row, &error);
    if (code != Code::kOk) return std::string("<") + CodeName(code) + ">";
    EXPECT_EQ(row.key.view(), key);
    EXPECT_EQ(row.value_type, ValueType::kString);
    return std::string(row.value.view());
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<MapEnv> shard_;
  MapReader reader_;
};

TEST_F(MapReaderTest, LooksKeysUp) {
  EXPECT_EQ(Lookup("Paris"), "France");
  EXPECT_EQ(Lookup("Berlin"), "Germany");
  EXPECT_EQ(Lookup("Rome"), "<not found>");
  EXPECT_EQ(&reader_.env(), shard_.get());
}

TEST_F(MapReaderTest, SeesItsSnapshotUntilRefresh) {
  Load({{"Paris", "France (new)"}, {"Rome", "Italy"}});  // merged into the same, cached environment
  EXPECT_EQ(Lookup("Paris"), "France");
  EXPECT_EQ(Lookup("Rome"), "<not found>");
  const Status s = reader_.Refresh();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Lookup("Paris"), "France (new)");
  EXPECT_EQ(Lookup("Rome"), "Italy");
  EXPECT_EQ(Lookup("Berlin"), "Germany");
}

TEST_F(MapReaderTest, CanBeReopened) {
  MapReader other;
  ASSERT_TRUE(other.Open(shard_).ok());
  ASSERT_TRUE(reader_.Open(shard_).ok());  // a second Open drops the first transaction and cursor
  EXPECT_EQ(Lookup("Paris"), "France");
}

}  // namespace
}  // namespace planb
