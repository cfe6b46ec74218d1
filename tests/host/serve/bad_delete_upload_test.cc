// Deletion batches (`<map>/delete` entries) sent to a real `planb serve`: a malformed one (too big, an unknown
// verb, an expression that does not parse against the map's fields, data and delete for one map, an unknown map)
// is refused with an error naming the entry that reaches the sender, and nothing is staged or changed; a sound
// one is staged and merged.
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

std::string MakeZip(const std::string& path, const Entries& entries) {
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (zip == nullptr) return "";
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(zip, bytes.data(), bytes.size(), 0);
    if (zip_file_add(zip, name.c_str(), source, ZIP_FL_ENC_UTF_8) < 0) return "";
  }
  return zip_close(zip) == 0 ? path : "";
}

const std::string kManifest = "planb-batch 5\nid test/delete\n";

class BadDeleteUpload : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
    ASSERT_EQ(cluster_.Load({ExampleDataFiles()[0]}).exit_code, 0);
    ASSERT_TRUE(cluster_.WaitMerged(0));
    shards_before_ = cluster_.Dump(0);
  }

  Status Upload(const std::string& name, const Entries& entries) {
    const std::string zip = MakeZip(cluster_.dir() + "/" + name, entries);
    EXPECT_FALSE(zip.empty());
    UploadSettings settings;
    settings.request_timeout_ms = 5000;
    UploadOutcome outcome;
    return UploadBatch(context_, UploadTarget{"node1", cluster_.endpoint(0)}, zip, "test/" + name, settings, &outcome);
  }

  void ExpectRefused(const std::string& name, const Entries& entries, const std::string& part) {
    const Status s = Upload(name, entries);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
    EXPECT_TRUE(cluster_.WaitMerged(0));
    EXPECT_EQ(cluster_.Dump(0), shards_before_);
  }

  ClusterFixture cluster_{1};
  zmq::context_t context_;
  std::string shards_before_;
};

TEST_F(BadDeleteUpload, MalformedDeleteEntriesAreRefused) {
  ExpectRefused(
      "big.zip",
      {{"planb-batch", kManifest}, {"city_to_country/delete", "time 1\nwhere Key = '" + std::string(70000, 'x') + "'\n"}},
      "entry 'city_to_country/delete': delete entry of 70022 bytes, more than the limit of 65536");
  ExpectRefused("verb.zip", {{"planb-batch", kManifest}, {"city_to_country/delete", "time 1\ndrop table\n"}},
                "entry 'city_to_country/delete': delete entry: not 'all' or 'where <expression>'");
  ExpectRefused("expr.zip", {{"planb-batch", kManifest}, {"city_to_country/delete", "time 1\nwhere KeyStart = 5\n"}},
                "entry 'city_to_country/delete': --where: column 1: unknown field 'KeyStart'");
  ExpectRefused("syntax.zip", {{"planb-batch", kManifest}, {"city_to_country/delete", "time 1\nwhere Key = \n"}},
                "entry 'city_to_country/delete': --where: column");
  ExpectRefused("both.zip",
                {{"planb-batch", kManifest}, {"city_to_country/data.mdb", "x"}, {"city_to_country/delete", "time 1\nall\n"}},
                "map 'city_to_country' appears twice");
  ExpectRefused("unknown.zip", {{"planb-batch", kManifest}, {"no_such_map/delete", "time 1\nall\n"}},
                "map 'no_such_map' is not configured on this node");
  ExpectRefused("old.zip", {{"planb-batch", "planb-batch 2\nid test/old\n"}, {"city_to_country/delete", "all\n"}},
                "a delete entry in a planb-batch 2 batch");
  ExpectRefused("untimed.zip", {{"planb-batch", "planb-batch 3\nid test/untimed\n"}, {"city_to_country/delete", "all\n"}},
                "deletions carry their time since version 5");
  ExpectRefused("notime.zip", {{"planb-batch", kManifest}, {"city_to_country/delete", "all\n"}},
                "entry 'city_to_country/delete': delete entry: no 'time <milliseconds>' line first");
  EXPECT_TRUE(cluster_.process(0).running()) << cluster_.process(0).log();
}

TEST_F(BadDeleteUpload, ASoundDeletionIsStagedAndMerged) {
  // Under another id than its manifest's it is refused: the id the sender was checked for is the id merged.
  ExpectRefused("good.zip", {{"planb-batch", kManifest}, {"city_to_country/delete", "time 1\nall\n"}},
                "its manifest names batch test/delete, not the id it was uploaded under");
  // Its time is far ahead of every row loaded: all of them go.
  const Status s = Upload("good.zip", {{"planb-batch", "planb-batch 5\nid test/good.zip\n"},
                                       {"city_to_country/delete", "time 4102444800000\nall\n"}});
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(cluster_.WaitMerged(0));
  const testing::ProcessResult r = testing::RunPlanb(
      {"--config", cluster_.config(0), "--home", cluster_.home(0), "query", "city_to_country", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Key,ValueType,Value\n");
  EXPECT_NE(cluster_.Dump(0), shards_before_);
}

}  // namespace
}  // namespace planb
