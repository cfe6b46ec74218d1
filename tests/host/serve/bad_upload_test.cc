// Hostile or broken batches sent to a real `planb serve`: each is refused with an error that reaches the sender,
// nothing is staged, the shards do not change, and the node goes on serving.
#include <gtest/gtest.h>
#include <zip.h>

#include <string>
#include <utility>
#include <vector>

#include "host/transfer/upload_client.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;

using Entries = std::vector<std::pair<std::string, std::string>>;

// A zip with `entries` (name, bytes) in order, deflated.
std::string MakeZip(const std::string& path, const Entries& entries) {
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (zip == nullptr) return "";
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(zip, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(zip, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) return "";
    zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 9);
  }
  return zip_close(zip) == 0 ? path : "";
}

const std::string kManifest = "planb-batch 1\n";

class BadUpload : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.top_level_extra = "max_batch_size = 8MiB\n";
    ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
    ASSERT_EQ(cluster_.Load({ExampleDataFiles()[0]}).exit_code, 0);
    ASSERT_TRUE(cluster_.WaitMerged(0));
    shards_before_ = cluster_.Dump(0);
  }

  // Uploads the zip and returns the node's answer; checks that nothing was staged or merged.
  Status Upload(const std::string& zip_path) {
    UploadSettings settings;
    settings.request_timeout_ms = 5000;
    UploadOutcome outcome;
    const Status s = UploadBatch(context_, UploadTarget{"node1", cluster_.endpoint(0)}, zip_path,
                                 "test/" + zip_path, settings, &outcome);
    EXPECT_EQ(outcome.attempts, 1) << "a refused batch is not retried";
    EXPECT_TRUE(cluster_.WaitMerged(0));
    EXPECT_EQ(cluster_.Dump(0), shards_before_);
    return s;
  }

  void TearDown() override {
    // Still serving: a good load goes through.
    EXPECT_TRUE(cluster_.process(0).running()) << cluster_.process(0).log();
    EXPECT_EQ(cluster_.Load({ExampleDataFiles()[1]}).exit_code, 0);
  }

  ClusterFixture cluster_{1};
  zmq::context_t context_;
  std::string shards_before_;
};

TEST_F(BadUpload, AnEntryEscapingTheDirectoryIsRefused) {
  const Status s = Upload(MakeZip(cluster_.dir() + "/slip.zip", {{"planb-batch", kManifest},
                                                                 {"../evil/data.mdb", "x"}}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("../evil/data.mdb"), std::string::npos) << s.message();
}

TEST_F(BadUpload, AZipBombIsRefusedBeforeItIsUnpacked) {
  const std::string zeros(64 << 20, '\0');  // 64 MiB declared, a few tens of KiB on the wire
  const Status s = Upload(MakeZip(cluster_.dir() + "/bomb.zip", {{"planb-batch", kManifest},
                                                                 {"city_to_country/data.mdb", zeros}}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("bomb.zip"), std::string::npos) << s.message();
}

TEST_F(BadUpload, ABatchForAMapThisNodeDoesNotKnowIsRefused) {
  const Status s = Upload(MakeZip(cluster_.dir() + "/unknown.zip", {{"planb-batch", kManifest},
                                                                    {"no_such_map/data.mdb", "x"}}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("no_such_map"), std::string::npos) << s.message();
}

TEST_F(BadUpload, ACorruptLmdbFileIsRefused) {
  std::string garbage(256 << 10, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 2654435761u) >> 13);
  const Status s = Upload(MakeZip(cluster_.dir() + "/corrupt.zip", {{"planb-batch", kManifest},
                                                                    {"city_to_country/data.mdb", garbage}}));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("city_to_country"), std::string::npos) << s.message();
}

TEST_F(BadUpload, SomethingThatIsNotAZipIsRefused) {
  testing::WriteFile(cluster_.dir() + "/text.zip", "not a zip at all");
  const Status s = Upload(cluster_.dir() + "/text.zip");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("text.zip"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace planb
