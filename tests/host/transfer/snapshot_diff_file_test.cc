// The snapshot diff file (host/transfer/snapshot_diff_file.h): what a node writes reads back part for part, and
// every way a head can be wrong is refused naming the file and what is wrong.
#include "host/transfer/snapshot_diff_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_env.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

ContentVersion After(ContentVersion version, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    version.batches += 1;
    version.digest ^= XXH3_64bits(id.data(), id.size());
  }
  return version;
}

class SnapshotDiffFileTest : public ::testing::Test {
 protected:
  // A diff of two parts ("first part bytes", "second, longer part bytes") from version {3, 0xabc}.
  std::string WriteTwoParts() {
    Spit(dir_.path() + "/a.zip", "first part bytes");
    Spit(dir_.path() + "/b.zip", "second, longer part bytes");
    head_.map = "geo";
    head_.from = ContentVersion{3, 0xabc};
    head_.batch_ids = {"content:aa", "node1/17-2 with a space"};
    head_.to = After(head_.from, head_.batch_ids);
    const std::string path = dir_.path() + "/d.diff";
    const Status s = WriteDiffFile(path, head_, {dir_.path() + "/a.zip", dir_.path() + "/b.zip"});
    EXPECT_TRUE(s.ok()) << s.message();
    return path;
  }
  // Reads `bytes` as a diff into a fresh directory.
  Status Read(const std::string& bytes, uint64_t max = 1 << 20) {
    const std::string path = dir_.path() + "/bad.diff";
    Spit(path, bytes);
    const std::string out = dir_.path() + "/out" + std::to_string(++reads_);
    std::filesystem::create_directories(out);
    DiffHead head;
    std::vector<std::string> parts;
    return ReadDiffFile(path, out, max, &head, &parts);
  }

  TempDir dir_;
  DiffHead head_;
  int reads_ = 0;
};

TEST_F(SnapshotDiffFileTest, PartsReadBackInOrderWithTheirIds) {
  const std::string path = WriteTwoParts();
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  const std::string out = dir_.path() + "/out";
  std::filesystem::create_directories(out);
  DiffHead head;
  std::vector<std::string> parts;
  const Status s = ReadDiffFile(path, out, 1 << 20, &head, &parts);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(head.map, "geo");
  EXPECT_EQ(head.from, head_.from);
  EXPECT_EQ(head.to, head_.to);
  EXPECT_EQ(head.batch_ids, head_.batch_ids);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Slurp(parts[0]), "first part bytes");
  EXPECT_EQ(Slurp(parts[1]), "second, longer part bytes");
}

TEST_F(SnapshotDiffFileTest, MalformedHeadsAreRefusedNamingTheProblem) {
  const std::string good = Slurp(WriteTwoParts());
  const size_t body = good.find("end\n") + 4;
  const std::string parts = good.substr(body);
  const std::string from = "from " + head_.from.ToString() + "\n";
  const std::string to = "to " + head_.to.ToString() + "\n";
  const std::string lines = "part 16 content:aa\npart 25 node1/17-2 with a space\nend\n";
  struct Case {
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "line 1 is missing"},
      {"PK\3\4 not a diff\n", "it does not start with \"planb-diff\""},
      {"planb-diff 2\n", "format version '2' is not 1"},
      {"planb-diff 1\nmap Not-A-Map\n", "line 2 is not \"map <map name>\""},
      {"planb-diff 1\nmap geo\nfrom 3\n", "line 3 is not \"from <content version>\""},
      {"planb-diff 1\nmap geo\n" + from + "to x\n", "line 4 is not \"to <content version>\""},
      {"planb-diff 1\nmap geo\n" + from + to + "end\n", "it has no parts"},
      {"planb-diff 1\nmap geo\n" + from + to + "parts 16 a\n", "line 5 is neither"},
      {"planb-diff 1\nmap geo\n" + from + to + "part 0 a\n", "the part's size is not a count of bytes above 0"},
      {"planb-diff 1\nmap geo\n" + from + to + "part -1 a\n", "the part's size is not a count of bytes above 0"},
      {"planb-diff 1\nmap geo\n" + from + to + "part 16 bad\x01id\n", "the part's batch id is not a valid batch id"},
      {"planb-diff 1\nmap geo\n" + from + to + "part 16 content:aa\nend\n" + parts,
       "its parts take content version"},
      {"planb-diff 1\nmap geo\n" + from + to + lines + parts.substr(1), "its parts add up to 41 bytes"},
      {"planb-diff 1\nmap geo\n" + from + to + lines + parts + "x", "but the file has"},
      {"planb-diff 1\nmap geo\n" + from + to + lines, "its parts add up to 41 bytes"},
  };
  for (const Case& c : cases) {
    const Status s = Read(c.bytes);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.message;
    EXPECT_THAT(s.message(), HasSubstr("bad.diff: not a snapshot diff: "));
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  // The good file, read whole, and a limit below its parts' bytes.
  EXPECT_TRUE(Read(good).ok());
  EXPECT_THAT(Read(good, 40).message(), HasSubstr("its parts hold more than 40 bytes"));
}

TEST_F(SnapshotDiffFileTest, MoreThanTheMostPartsIsRefused) {
  std::string bytes = "planb-diff 1\nmap geo\nfrom 0 0000000000000000\nto 1 0000000000000000\n";
  for (size_t i = 0; i <= kMaxDiffBatches; ++i) bytes += "part 1 id" + std::to_string(i) + "\n";
  EXPECT_THAT(Read(bytes).message(), HasSubstr("more than 1024 parts"));
}

TEST_F(SnapshotDiffFileTest, ALineLongerThanAnyHeadLineIsRefused) {
  const Status s = Read("planb-diff 1\nmap " + std::string(4096, 'a') + "\n");
  EXPECT_THAT(s.message(), HasSubstr("line 2 is missing or longer than"));
}

}  // namespace
}  // namespace planb::testing
