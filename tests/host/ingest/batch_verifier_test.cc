#include "host/ingest/batch_verifier.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host/ingest/stream_writer.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ReadFile;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr size_t kPage = 4096;

class BatchVerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_ / "node", StateMapSection("m", "hashed") + StateMapSection("d", "direct"), &node_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A finished StreamWriter directory written under `config` with `rows` rows per map.
  std::string WriteBatch(const std::string& config, const std::vector<std::string>& maps, int rows) {
    const std::string where = dir_ / ("writer" + std::to_string(batches_++));
    std::unique_ptr<Runtime> runtime;
    const Status opened = OpenTestRuntime(where, config, &runtime);
    EXPECT_TRUE(opened.ok()) << opened.message();
    if (!opened.ok()) return "";
    const std::string stream = where + "/stream";
    StreamWriter writer(runtime->catalog(), stream);
    for (const std::string& map : maps) {
      for (int i = 0; i < rows; ++i) {
        const std::string key = "key-" + std::to_string(i);
        const std::string value = "value of row " + std::to_string(i) + " in " + map;
        const Status s = writer.Add(map, StateRecord(key, value));
        EXPECT_TRUE(s.ok()) << s.message();
      }
    }
    const Status finished = writer.Finish();
    EXPECT_TRUE(finished.ok()) << finished.message();
    return stream;
  }

  std::string Zip(const std::string& batch_dir) {
    const std::string zip = dir_ / ("batch" + std::to_string(batches_++) + ".zip");
    const Status s = ZipBatch(batch_dir, zip, ZipOptions());
    EXPECT_TRUE(s.ok()) << s.message();
    return zip;
  }

  Status Verify(const std::string& zip) {
    const Status s = VerifyBatch(*node_, zip, Scratch(), UnzipLimits());
    EXPECT_FALSE(fs::exists(Scratch())) << s.message();
    return s;
  }

  std::string Scratch() const { return dir_ / "scratch/verify"; }
  std::string NodeConfig() const { return StateMapSection("m", "hashed") + StateMapSection("d", "direct"); }

  TempDir dir_;
  std::unique_ptr<Runtime> node_;
  int batches_ = 0;
};

TEST_F(BatchVerifierTest, SoundBatchPasses) {
  const Status s = Verify(Zip(WriteBatch(NodeConfig(), {"m", "d"}, 5000)));
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(BatchVerifierTest, EmptyBatchPasses) {
  const Status s = Verify(Zip(WriteBatch(NodeConfig(), {}, 0)));
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(BatchVerifierTest, RefusesMapNotInConfig) {
  const std::string zip = Zip(WriteBatch(NodeConfig() + StateMapSection("extra", "hashed"), {"m", "extra"}, 10));
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'extra' is not configured on this node")) << s.message();
}

TEST_F(BatchVerifierTest, RefusesMapWrittenWithAnotherLayout) {
  // Same map name, other key scheme: the meta the batch carries does not match this node's config.
  const std::string zip = Zip(WriteBatch(StateMapSection("m", "direct"), {"m"}, 10));
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': written as")) << s.message();
  EXPECT_FALSE(Contains(s.message(), Scratch())) << s.message();
}

TEST_F(BatchVerifierTest, RefusesRandomBytes) {
  const std::string batch = WriteBatch(NodeConfig(), {"d", "m"}, 10);
  std::mt19937 random(7);
  std::string junk(64 * 1024, '\0');
  for (char& c : junk) c = static_cast<char>(random());
  WriteFile(batch + "/m/data.mdb", junk);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': not an LMDB file")) << s.message();
}

TEST_F(BatchVerifierTest, RefusesTruncatedFileWithoutCrashing) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 20000);
  const std::string data = ReadFile(batch + "/m/data.mdb");
  ASSERT_GT(data.size(), 40 * kPage);
  WriteFile(batch + "/m/data.mdb", data.substr(0, data.size() / 2));
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': LMDB file is truncated")) << s.message();
}

TEST_F(BatchVerifierTest, RefusesGarbagePagesWithoutCrashing) {
  const std::string batch = WriteBatch(NodeConfig(), {"d", "m"}, 20000);
  std::string data = ReadFile(batch + "/m/data.mdb");
  ASSERT_GT(data.size(), 40 * kPage);
  // Several pages in the middle: data table leaves and branches (the few free pages of a fresh batch sit low).
  const size_t middle = data.size() / kPage / 2;
  for (size_t i = middle * kPage; i < (middle + 4) * kPage; ++i) data[i] = static_cast<char>(0xab ^ (i * 31));
  WriteFile(batch + "/m/data.mdb", data);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': ")) << s.message();
}

// LMDB trusts a node's size: a leaf whose first value claims 2 GiB makes the walk read past the mapping. The
// verifier's child dies of the signal; the test process does not.
TEST_F(BatchVerifierTest, ReportsCrashingFileAsCorrupt) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 20000);
  std::string data = ReadFile(batch + "/m/data.mdb");
  ASSERT_GT(data.size(), 40 * kPage);
  // Page header (lmdb's MDB_page): pgno u64, pad u16, flags u16, lower u16, upper u16, then node offsets (u16).
  // A leaf in the second half of a fresh batch belongs to the data table (its few free pages sit low).
  auto u16 = [&](size_t at) {
    return static_cast<uint16_t>(static_cast<uint8_t>(data[at]) | uint8_t(data[at + 1]) << 8);
  };
  size_t leaf = 0;
  for (size_t page = data.size() / kPage / 2; page < data.size() / kPage && leaf == 0; ++page) {
    if (u16(page * kPage + 10) == 0x02 && u16(page * kPage + 12) > 16) leaf = page * kPage;
  }
  ASSERT_NE(leaf, 0u);
  const size_t node = leaf + u16(leaf + 16);
  data[node] = data[node + 1] = static_cast<char>(0xff);  // data size, low 16 bits
  data[node + 2] = static_cast<char>(0xff);               // high 16 bits: 0x7fffffff
  data[node + 3] = 0x7f;
  WriteFile(batch + "/m/data.mdb", data);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': LMDB file is corrupt (verifier killed by signal "))
      << s.message();
}

TEST_F(BatchVerifierTest, RefusesBrokenZipRules) {
  const std::string zip = dir_ / "not.zip";
  WriteFile(zip, "not a zip");
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": not a zip archive")) << s.message();
}

TEST_F(BatchVerifierTest, LeavesExistingScratchAlone) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  WriteFile(Scratch() + "/mine", "keep");
  const Status s = VerifyBatch(*node_, zip, Scratch(), UnzipLimits());
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), Scratch() + ": already exists")) << s.message();
  EXPECT_EQ(ReadFile(Scratch() + "/mine"), "keep");
}

}  // namespace
}  // namespace planb
