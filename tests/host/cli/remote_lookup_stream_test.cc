// `planb lookup --remote MAP --keys-from -` streams: keys written to its standard input are answered while the
// writer waits (a coprocess gets each answer before it writes the next key), and a stream prints, in every
// format, what the local command prints for the same keys from standard input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/cluster_fixture.h"
#include "support/filter_process.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ProcessResult;
using ::planb::testing::ProcessSpec;
using ::testing::HasSubstr;

void StartAndLoad(ClusterFixture& cluster) {
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(testing::ExampleDataFiles()));
}

// `planb lookup --remote` on the processing node's config (a home nothing was loaded into), or the local command
// on node 1's home, with `keys` on standard input.
ProcessResult WithInput(const std::vector<std::string>& config_and_home, std::vector<std::string> args,
                        const std::string& keys) {
  ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = config_and_home;
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  spec.stdin_text = keys;
  return testing::RunProcess(spec);
}

class RemoteLookupStream : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new ClusterFixture(1);
    StartAndLoad(*cluster_);
    cluster_->WriteProcessingConfig();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  std::vector<std::string> Client() const {
    return {"--config", cluster_->dir() + "/proc.ini", "--home", cluster_->dir() + "/empty-home"};
  }
  std::vector<std::string> Node() const { return {"--config", cluster_->config(0), "--home", cluster_->home(0)}; }
  static ClusterFixture* cluster_;
};
ClusterFixture* RemoteLookupStream::cluster_ = nullptr;

TEST_F(RemoteLookupStream, EachKeyIsAnsweredWhileTheWriterWaits) {
  std::vector<std::string> args = Client();
  for (const char* a : {"lookup", "--remote", "country_to_capital", "--keys-from", "-", "--format", "csv"}) {
    args.push_back(a);
  }
  testing::FilterProcess lookup(PLANB_BINARY, args);
  ASSERT_TRUE(lookup.started());
  std::string line;
  ASSERT_TRUE(lookup.Write("Albania\n"));
  ASSERT_TRUE(lookup.ReadLine(&line)) << lookup.err();
  EXPECT_EQ(line, "key,value,found");
  ASSERT_TRUE(lookup.ReadLine(&line)) << lookup.err();
  EXPECT_EQ(line, "Albania,Tirana,true");
  // The input is still open: that answer came for the key alone.
  ASSERT_TRUE(lookup.Write("Atlantis\r\n\nBelarus\n"));
  ASSERT_TRUE(lookup.ReadLine(&line)) << lookup.err();
  EXPECT_EQ(line, "Atlantis,,false");
  ASSERT_TRUE(lookup.ReadLine(&line)) << lookup.err();
  EXPECT_EQ(line, "Belarus,Minsk,true");
  EXPECT_EQ(lookup.Finish(), 1) << "a key was absent";
  EXPECT_THAT(lookup.err(), HasSubstr("no key 'Atlantis'"));
}

// Keys enough for several batches and several READs (40,000 keys, 1.2 MB), and one key alone: the stream prints
// what the local command prints for the same standard input, in every format.
TEST_F(RemoteLookupStream, PrintsWhatTheLocalCommandPrintsInEveryFormat) {
  std::string many;
  for (int i = 0; i < 40000; ++i) {
    many += i % 100 == 0 ? "Albania\n" : i % 100 == 1 ? "Atlantis\n" : "k" + std::to_string(i) + "-padding-padding\n";
  }
  for (const std::string& keys : {std::string("Belarus\n"), std::string("Belarus"), many}) {
    for (const char* format : {"text", "json", "csv"}) {
      const std::vector<std::string> lookup = {"lookup", "country_to_capital", "--keys-from", "-", "--format", format};
      std::vector<std::string> remote = lookup;
      remote.insert(remote.begin() + 1, "--remote");
      const ProcessResult r = WithInput(Client(), remote, keys);
      const ProcessResult l = WithInput(Node(), lookup, keys);
      EXPECT_EQ(r.exit_code, l.exit_code) << format << ": " << r.err.substr(0, 300);
      EXPECT_TRUE(r.out == l.out) << format << " stdout differs; remote begins " << r.out.substr(0, 200)
                                  << "\nlocal begins " << l.out.substr(0, 200);
      EXPECT_TRUE(r.err == l.err) << format << " stderr differs";
    }
  }
  // One key from standard input is a stream of one: printed with its key, unlike a single KEY argument.
  const ProcessResult one = WithInput(Client(), {"lookup", "--remote", "country_to_capital", "--keys-from", "-"},
                                      "Belarus\n");
  EXPECT_EQ(one.out, "Belarus\tMinsk\n");
}

TEST_F(RemoteLookupStream, NoKeyAtAllIsAnError) {
  const ProcessResult r =
      WithInput(Client(), {"lookup", "--remote", "country_to_capital", "--keys-from", "-"}, "\n\r\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("no KEY given"));
}

}  // namespace
}  // namespace planb
