// `planb lookup --remote` and `planb query --remote` against real storage nodes on loopback: the processing
// node's home stays empty, and what it prints (stdout, stderr, exit status) is what the command prints when run
// on the node itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "host/transfer/remote_read.h"
#include "host/transfer/request_channel.h"
#include "planb/encoding.h"
#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::RunPlanb;
using ::planb::testing::TestTimeScale;
using ::testing::HasSubstr;
using ::testing::Not;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Starts `nodes` storage nodes and loads the example data into them through the processing node "proc".
void StartAndLoad(ClusterFixture& cluster, int nodes) {
  for (int i = 0; i < nodes; ++i) PLANB_ASSERT_NODE_STARTS(cluster, i);
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (int i = 0; i < nodes; ++i) ASSERT_TRUE(cluster.WaitMerged(i)) << cluster.process(i).log();
}

// `planb` on the processing node's config with a home of its own that nothing was loaded into.
ProcessResult Remote(const ClusterFixture& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), {"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/empty-home"});
  return RunPlanb(args);
}
// The same command run locally on node `i`'s home.
ProcessResult OnNode(const ClusterFixture& cluster, int i, std::vector<std::string> args) {
  args.insert(args.begin(), {"--config", cluster.config(i), "--home", cluster.home(i)});
  return RunPlanb(args);
}

void ExpectSameResult(const ProcessResult& remote, const ProcessResult& local) {
  EXPECT_EQ(remote.exit_code, local.exit_code);
  EXPECT_EQ(remote.out, local.out);
  EXPECT_EQ(remote.err, local.err);
}

TEST(RemoteCommand, AnswersAsTheNodeWouldWithoutLocalShards) {
  ClusterFixture cluster;
  StartAndLoad(cluster, 2);

  const ProcessResult found = Remote(cluster, {"lookup", "--remote", "country_to_capital", "Albania"});
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_EQ(found.out, "Tirana\n");
  EXPECT_EQ(found.err, "");

  const ProcessResult missing = Remote(cluster, {"lookup", "--remote", "country_to_capital", "Atlantis"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "planb: country_to_capital: no key 'Atlantis'\n");
  ExpectSameResult(missing, OnNode(cluster, 0, {"lookup", "country_to_capital", "Atlantis"}));

  const std::vector<std::string> query = {"query", "country_to_capital", "--format", "csv", "--where",
                                          "Key startsWith 'A'"};
  std::vector<std::string> remote_query = query;
  remote_query.push_back("--remote");
  const ProcessResult remote = Remote(cluster, remote_query);
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_TRUE(Contains(remote.out, "Albania")) << remote.out;
  ExpectSameResult(remote, OnNode(cluster, 0, query));

  // --limit, --explain (its stats go to stderr) and a key that looks like an option travel as given.
  const std::vector<std::string> explained = {"query", "country_to_capital", "--limit", "2", "--explain"};
  std::vector<std::string> remote_explained = explained;
  remote_explained.push_back("--remote");
  ExpectSameResult(Remote(cluster, remote_explained), OnNode(cluster, 0, explained));
  ExpectSameResult(Remote(cluster, {"lookup", "--remote", "country_to_capital", "--", "--home"}),
                   OnNode(cluster, 0, {"lookup", "country_to_capital", "--", "--home"}));

  // Batched: many keys in one request, read locally from --keys-from and sent as arguments.
  const std::string keys_file = cluster.dir() + "/keys.txt";
  ::planb::testing::WriteFile(keys_file, "Albania\nAtlantis\n-5\n");
  const ProcessResult batch =
      Remote(cluster, {"lookup", "--remote", "country_to_capital", "Andorra", "--keys-from", keys_file});
  EXPECT_EQ(batch.exit_code, 1);
  EXPECT_TRUE(Contains(batch.out, "Andorra\tAndorra la Vella\nAlbania\tTirana\n")) << batch.out;
  ExpectSameResult(batch, OnNode(cluster, 0, {"lookup", "country_to_capital", "Andorra", "--keys-from", keys_file}));
  const ProcessResult sneaky = Remote(cluster, {"lookup", "--remote", "country_to_capital", "--keys-from",
                                                cluster.dir() + "/absent.txt"});
  EXPECT_EQ(sneaky.exit_code, 2) << "the keys file is read here, not on the node";
  EXPECT_TRUE(Contains(sneaky.err, "--keys-from: cannot read")) << sneaky.err;

  const ProcessResult unknown = Remote(cluster, {"lookup", "--remote", "no_such_map", "x"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "no_such_map")) << unknown.err;
  ExpectSameResult(unknown, OnNode(cluster, 0, {"lookup", "no_such_map", "x"}));

  const ProcessResult bad_where =
      Remote(cluster, {"query", "--remote", "country_to_capital", "--where", "Key startsWith"});
  EXPECT_EQ(bad_where.exit_code, 2);
  EXPECT_TRUE(Contains(bad_where.err, "planb: ")) << bad_where.err;
  ExpectSameResult(bad_where, OnNode(cluster, 0, {"query", "country_to_capital", "--where", "Key startsWith"}));

  // Nothing was read or written locally: the processing node's home holds no shard and no snapshot.
  std::error_code ec;
  for (const char* dir : {"/empty-home/shards", "/empty-home/snapshots"}) {
    const std::string path = cluster.dir() + dir;
    EXPECT_TRUE(!std::filesystem::exists(path) || std::filesystem::is_empty(path, ec)) << path;
  }
  EXPECT_TRUE(cluster.process(0).running());
  EXPECT_TRUE(cluster.process(1).running());
}

TEST(RemoteCommand, TheNextNodeAnswersWhenOneIsDownAndAllDownNamesEach) {
  ClusterFixture cluster;
  StartAndLoad(cluster, 2);
  ASSERT_EQ(cluster.process(0).Stop(), 0) << cluster.process(0).log();
  const ProcessResult second = Remote(cluster, {"lookup", "--remote", "country_to_capital", "Albania"});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "Tirana\n");

  ASSERT_EQ(cluster.process(1).Stop(), 0) << cluster.process(1).log();
  const ProcessResult none = Remote(cluster, {"lookup", "--remote", "country_to_capital", "Albania"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.out, "");
  // Down nodes refuse the connection: said at once, not "timed out" after request_timeout.
  EXPECT_EQ(none.err, "planb: no storage node answered: node1 (connection refused by " + cluster.endpoint(0) +
                          "), node2 (connection refused by " + cluster.endpoint(1) + ")\n");
}

TEST(RemoteCommand, AHundredThousandKeysAreSplitIntoRequestsAndAnsweredAsOne) {
  ClusterFixture cluster(1);
  StartAndLoad(cluster, 1);
  // About 2.3 MB of keys: more than one READ may carry (protocol::kMaxReadRequest).
  std::string keys;
  for (int i = 0; i < 100000; ++i) {
    keys += i % 1000 == 0 ? "Albania\n" : i % 1000 == 1 ? "Atlantis\n" : "k" + std::to_string(i) + "-padding\n";
  }
  const std::string keys_file = cluster.dir() + "/many-keys.txt";
  ::planb::testing::WriteFile(keys_file, keys);
  const ProcessResult remote =
      Remote(cluster, {"lookup", "--remote", "country_to_capital", "--keys-from", keys_file});
  const ProcessResult local = OnNode(cluster, 0, {"lookup", "country_to_capital", "--keys-from", keys_file});
  EXPECT_EQ(remote.exit_code, 1) << remote.err.substr(0, 500);
  EXPECT_EQ(remote.exit_code, local.exit_code);
  EXPECT_TRUE(remote.out == local.out) << "stdout differs";
  EXPECT_TRUE(remote.err == local.err) << "stderr differs";
  EXPECT_FALSE(Contains(remote.err, "timed out"));
}

// lookup's --format and --quiet travel to the node: the same bytes as there.
TEST(RemoteCommand, LookupFormatsAndQuietGiveTheNodesBytes) {
  ClusterFixture cluster;
  StartAndLoad(cluster, 2);
  for (const std::string format : {"json", "csv", "text"}) {
    const std::vector<std::string> lookup = {"lookup", "country_to_capital", "Albania", "Atlantis", "--format", format};
    std::vector<std::string> remote = lookup;
    remote.push_back("--remote");
    const ProcessResult result = Remote(cluster, remote);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(Contains(result.out, "Albania")) << result.out;
    EXPECT_EQ(Contains(result.out, "Atlantis"), format != "text") << result.out;
    ExpectSameResult(result, OnNode(cluster, 0, lookup));
    remote.push_back("--quiet");
    const ProcessResult quiet = Remote(cluster, remote);
    EXPECT_EQ(quiet.exit_code, 1);
    EXPECT_EQ(quiet.out, result.out);
    EXPECT_EQ(quiet.err, "");
  }
}

// Review of issue 11: a lookup split into several READs printed each part as a whole output ("[...][...]" in
// json, a csv header per part, a one-key last part as a bare value in text). Remote output must be the local
// command's bytes for every format and key count.
TEST(RemoteCommand, SplitLookupsPrintTheLocalBytesInEveryFormat) {
  ClusterFixture cluster(1);
  StartAndLoad(cluster, 1);
  const std::string map = "country_to_capital";
  // Missing keys of about 480 bytes fill two parts; the last of them is sized so that the third part holds
  // one found key. The head mirrors the one the client sends (a lookup of the map in wire format); READ's
  // payload is its fixed fields, then u32 length + bytes per key.
  protocol::ReadRequest head;
  head.kind = protocol::ReadKind::kLookup;
  head.map = map;
  head.format = protocol::ReadFormat::kWire;
  const size_t head_size = protocol::EncodeRead(head).size();
  std::vector<std::string> keys = {"Andorra", "Atlantis"};
  size_t size = head_size + 4 + 7 + 4 + 8;
  int full_parts = 0;
  while (full_parts < 2) {
    std::string key = "k" + std::to_string(100000 + keys.size()) + std::string(470, 'p');
    const size_t room = protocol::kMaxReadRequest - size;
    if (room - 4 - 5 <= key.size()) {
      key.assign(room - 4 - 5, 'q');  // leaves 5 bytes: too few for "Albania" (4 + 7)
      ++full_parts;
      size = head_size;
    } else {
      size += 4 + key.size();
    }
    keys.push_back(key);
  }
  keys.push_back("Albania");
  const std::vector<protocol::ReadRequest> parts = SplitLookupRequest(head, keys);
  ASSERT_EQ(parts.size(), 3u);
  ASSERT_EQ(parts.back().keys, std::vector<std::string>{"Albania"});
  for (const protocol::ReadRequest& part : parts) EXPECT_LE(protocol::EncodeRead(part).size(), protocol::kMaxReadRequest);
  std::string lines;
  for (const std::string& key : keys) lines += key + "\n";
  const std::string keys_file = cluster.dir() + "/split-keys.txt";
  ::planb::testing::WriteFile(keys_file, lines);

  for (const std::string format : {"text", "json", "csv"}) {
    SCOPED_TRACE(format);
    const std::vector<std::string> lookup = {"lookup", map, "--keys-from", keys_file, "--format", format};
    std::vector<std::string> remote = lookup;
    remote.push_back("--remote");
    const ProcessResult local = OnNode(cluster, 0, lookup);
    const ProcessResult result = Remote(cluster, remote);
    EXPECT_EQ(result.exit_code, 1) << result.err.substr(0, 500);
    EXPECT_EQ(result.exit_code, local.exit_code);
    EXPECT_TRUE(result.out == local.out) << "stdout differs; remote ends: "
                                         << result.out.substr(result.out.size() > 300 ? result.out.size() - 300 : 0);
    EXPECT_TRUE(result.err == local.err) << "stderr differs";
    EXPECT_TRUE(Contains(local.out, "Albania")) << local.out.substr(0, 300);
  }
  // An error in a later part (a key that is no number) leaves stdout empty and says only that, as locally.
  std::string numbers;
  for (int i = 0; i < 150000; ++i) numbers += "1500\n";
  numbers += "15x\n";
  const std::string numbers_file = cluster.dir() + "/number-keys.txt";
  ::planb::testing::WriteFile(numbers_file, numbers);
  const std::vector<std::string> bad = {"lookup", "employeeIdToOffice", "--keys-from", numbers_file};
  std::vector<std::string> remote_bad = bad;
  remote_bad.push_back("--remote");
  const ProcessResult bad_result = Remote(cluster, remote_bad);
  EXPECT_EQ(bad_result.exit_code, 2);
  EXPECT_EQ(bad_result.out, "");
  ExpectSameResult(bad_result, OnNode(cluster, 0, bad));

  // One key, and a few keys, in each format (no split), on maps of every answer shape: values, number keys
  // (json prints them as numbers), sessions (start and end).
  const std::vector<std::vector<std::string>> small = {
      {"lookup", map, "Albania"},
      {"lookup", map, "Atlantis"},
      {"lookup", "employeeIdToOffice", "1500"},
      {"lookup", "employeeIdToOffice", "1500", "999999", "2500"},
      {"lookup", "user_app_sessions", "--time", "2024-01-01T17:30:00Z", "user000_app2", "nobody"},
  };
  for (const std::vector<std::string>& args : small) {
    for (const std::string format : {"text", "json", "csv"}) {
      std::vector<std::string> lookup = args;
      lookup.insert(lookup.end(), {"--format", format});
      std::vector<std::string> remote = lookup;
      remote.push_back("--remote");
      SCOPED_TRACE(::testing::PrintToString(lookup));
      ExpectSameResult(Remote(cluster, remote), OnNode(cluster, 0, lookup));
    }
  }
}

// Loads Wales = `capital` into country_to_capital through the processing node; waits until node1 merged it.
void LoadCapital(ClusterFixture& cluster, const std::string& capital) {
  const std::string file = cluster.dir() + "/" + capital + ".xml";
  using ::planb::testing::Ref;
  using ::planb::testing::ReferenceData;
  ::planb::testing::WriteFile(file, ReferenceData(Ref("country_to_capital", "Wales", capital)));
  const ProcessResult load = cluster.Load({file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
}

// Sends a READ of `payload` to `endpoint` as is (no client-side check) and returns the ERROR it gets, waiting at
// most `timeout_ms`; fails the test on any other outcome.
protocol::ErrorReply ReadError(const std::string& endpoint, const std::string& payload, int64_t timeout_ms) {
  zmq::context_t context;
  uint64_t next_request_id = 1;
  RequestChannel channel(context, NodeAddress{"node", endpoint, std::nullopt}, timeout_ms, &next_request_id);
  uint64_t request_id = 0;
  EXPECT_TRUE(channel.Send(protocol::Command::kRead, payload, nullptr, &request_id));
  RequestChannel::Reply reply;
  bool timed_out = false;
  const Status s = channel.Await(RequestChannel::Clock::now() + std::chrono::milliseconds(timeout_ms),
                                 [request_id](uint64_t id) { return id == request_id; }, &reply, &timed_out);
  protocol::ErrorReply error;
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(timed_out) << "no answer within " << timeout_ms << " ms";
  EXPECT_EQ(reply.command, static_cast<uint16_t>(protocol::Command::kError));
  if (reply.command == static_cast<uint16_t>(protocol::Command::kError)) {
    EXPECT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
  }
  return error;
}

// Version 2's READ: u32 argc, then each command-line token as u32 length + bytes.
std::string CommandLinePayload(const std::vector<std::string>& args) {
  std::string payload(4, '\0');
  PutU32(reinterpret_cast<uint8_t*>(payload.data()), static_cast<uint32_t>(args.size()));
  for (const std::string& arg : args) {
    std::string length(4, '\0');
    PutU32(reinterpret_cast<uint8_t*>(length.data()), static_cast<uint32_t>(arg.size()));
    payload += length + arg;
  }
  return payload;
}

// Review of issue 11: a READ with --min-version held one of the node's 3 read threads for up to
// 10 x request_timeout, and the client dropped --min-version, so `lookup --remote --min-version N` did not wait.
// Since issue 38 a READ is typed and has no field to wait for: the client waits, polling the node.
TEST(RemoteCommand, MinVersionWaitsOnTheClientAndNeverInsideARead) {
  ClusterFixture cluster(1);  // request_timeout = 1s (x TestTimeScale): a wait for a version lasts 10 times that
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  LoadCapital(cluster, "Cardiff");  // content version 1
  cluster.WriteReaderConfig("client");
  const auto client = [&cluster](const std::vector<std::string>& args) { return cluster.RunOnReader("client", args); };
  const std::string map = "country_to_capital";

  ProcessResult r = client({"lookup", "--remote", "--min-version", "1", map, "Wales"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Cardiff\n");

  // A command line asking the node to wait is no READ at all now: refused at once, naming the field.
  const std::vector<std::vector<std::string>> waits = {{"lookup", "--min-version", "2", "--", map, "Wales"},
                                                       {"lookup", "--keys-from", "/etc/passwd", "--", map}};
  for (const std::vector<std::string>& args : waits) {
    const protocol::ErrorReply error = ReadError(cluster.endpoint(0), CommandLinePayload(args), 5000);
    EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
    EXPECT_EQ(error.message, "READ payload: unknown kind 0 (1 lookup, 2 query)");
  }

  // A version that does not come: the client waits 10 x request_timeout, then says what the node has.
  r = client({"lookup", "--remote", "--min-version", "2", map, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "planb: country_to_capital: content version 2 did not arrive within " +
                       std::to_string(10000 * TestTimeScale()) + " ms (10 x request_timeout);"
                   " storage node node1's shard is at 1\n");

  // One that comes while the client waits: the answer is read from it.
  ProcessResult waited;
  std::thread waiter([&] { waited = client({"lookup", "--remote", "--min-version", "2", map, "Wales", "Atlantis"}); });
  LoadCapital(cluster, "Caerdydd");
  waiter.join();
  EXPECT_EQ(waited.exit_code, 1) << waited.err;
  EXPECT_EQ(waited.out, "Wales\tCaerdydd\n");
  EXPECT_EQ(waited.err, "planb: country_to_capital: no key 'Atlantis'\n");
}

// Issue 38, defect 13: what a node tells a peer names no path of the node (its home, a shard's file): the log
// keeps them, the peer gets them relative to "<home>".
TEST(RemoteCommand, ANodesErrorsNameNoPathOfTheNode) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);  // nothing loaded: every map has no data there
  cluster.WriteReaderConfig("reader");
  const ProcessResult r = cluster.RunOnReader("reader", {"query", "--remote", "country_to_capital"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("map country_to_capital has no data on this node (home <home>)"));
  EXPECT_THAT(r.err, Not(HasSubstr(cluster.home(0)))) << r.err;
}

TEST(RemoteCommand, WithoutANodeListItIsAnError) {
  testing::TempDir dir;
  testing::WriteFile(dir / "single.ini", "[map.country_to_capital]\ntype = state\n");
  const ProcessResult result = RunPlanb(
      {"--config", dir / "single.ini", "--home", dir / "home", "lookup", "--remote", "country_to_capital", "x"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "planb: --remote needs a node_list in the config\n");

  const ProcessResult load =
      RunPlanb({"--config", dir / "single.ini", "--home", dir / "home", "load", "--remote", "f.xml"});
  EXPECT_EQ(load.exit_code, 2);
  EXPECT_TRUE(Contains(load.err, "option --remote does not apply to 'load'")) << load.err;
}

}  // namespace
}  // namespace planb
