// Running a node for months (issue 40), with real `planb serve` processes: Prometheus metrics scraped by a real
// HTTP client and parsed by the Prometheus client library's own parser, counters that move with uploads, merges
// and refusals; /healthz and /readyz (unready when the merge thread ends and below the disk floor); malformed HTTP;
// SIGHUP reopening log_file without stopping; SIGTERM within its bound while another process holds the merge
// lock; sd_notify READY/STOPPING; bad metrics_bind and log_file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <set>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "host/common/file_util.h"
#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"
#include "support/cluster_fixture.h"
#include "support/node_process.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::ProcessSpec;
using ::planb::testing::RunProcess;
using ::planb::testing::TempDir;
using ::planb::testing::WaitUntil;
using ::planb::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kMetricsOnAnyPort[] = "metrics_bind = 127.0.0.1:0\n";

// GET `url` with a real HTTP client (Python's urllib): {status, body}.
std::pair<int, std::string> HttpGet(const std::string& url) {
  const ProcessResult got = RunProcess({"/usr/bin/python3", {PLANB_SOURCE_DIR "/tests/support/http_probe.py", "get", url}});
  EXPECT_EQ(got.exit_code, 0) << got.err;
  const size_t newline = got.out.find('\n');
  if (newline == std::string::npos) return {-1, got.out};
  return {std::stoi(got.out.substr(0, newline)), got.out.substr(newline + 1)};
}

// Scrapes `url` and parses it with prometheus_client's parser: sample text ("name{labels}") -> value. Fails the
// test when the text does not parse.
std::map<std::string, double> Scrape(const std::string& url) {
  const ProcessResult got =
      RunProcess({"/usr/bin/python3", {PLANB_SOURCE_DIR "/tests/support/http_probe.py", "metrics", url}});
  EXPECT_EQ(got.exit_code, 0) << got.err;
  std::map<std::string, double> samples;
  std::istringstream lines(got.out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t space = line.rfind(' ');
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

double Sample(const std::map<std::string, double>& samples, const std::string& name) {
  const auto found = samples.find(name);
  return found == samples.end() ? -1 : found->second;
}

// The node's "http://HOST:PORT" from its "metrics: serving ..." log line, once it is there.
std::string MetricsBase(const std::string& log) {
  static const std::regex line("metrics: serving (http://[0-9.]+:[0-9]+)/metrics");
  std::smatch match;
  if (!std::regex_search(log, match, line)) return "";
  return match[1];
}

// One raw request on a fresh TCP connection: what the server answers (its status line), or "" when it closed
// the connection without answering. Reads until the server closes.
std::string RawExchange(const std::string& base, const std::string& request) {
  const std::string host_port = base.substr(7);
  const size_t colon = host_port.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(host_port.substr(colon + 1))));
  ::inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &address.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close while a huge request is still being sent
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return answer.substr(0, answer.find("\r\n"));
}

// Asks `endpoint` one request in plaintext and returns the reply's command.
uint16_t AskCommand(const std::string& endpoint, protocol::Command command, const std::string& payload) {
  zmq::context_t context;
  uint64_t next_id = 1;
  RequestChannel channel(context, {"node1", endpoint, std::nullopt}, 5000, &next_id);
  uint64_t id = 0;
  EXPECT_TRUE(channel.Send(command, payload, nullptr, &id));
  RequestChannel::Reply reply;
  bool timed_out = false;
  const Status awaited = channel.Await(RequestChannel::Clock::now() + std::chrono::seconds(10),
                                       [id](uint64_t got) { return got == id; }, &reply, &timed_out);
  EXPECT_TRUE(awaited.ok()) << awaited.message();
  return reply.command;
}

class OperationsTest : public ::testing::Test {
 protected:
  OperationsTest() : cluster_(1) {}

  // Starts the node with `extra` top-level lines (metrics on any port unless `extra` says otherwise) and returns
  // its HTTP base URL.
  std::string StartWithMetrics(const std::string& extra = "", const std::vector<std::string>& env = {}) {
    cluster_.top_level_extra = extra.find("metrics_bind") == std::string::npos ? kMetricsOnAnyPort + extra : extra;
    EXPECT_TRUE(cluster_.StartNode(0, env)) << cluster_.process(0).log();
    return MetricsBase(cluster_.process(0).log());
  }

  ClusterFixture cluster_;
};

TEST_F(OperationsTest, MetricsParseAsPrometheusTextAndMoveWithUploadsMergesAndRefusals) {
  const std::string base = StartWithMetrics();
  ASSERT_FALSE(base.empty()) << cluster_.process(0).log();
  const auto before = Scrape(base + "/metrics");
  EXPECT_EQ(Sample(before, "planb_batches_merged_total{}"), 0);
  EXPECT_EQ(Sample(before, "planb_staged_batches{}"), 0);
  EXPECT_EQ(Sample(before, "planb_merge_thread_up{}"), 1);
  EXPECT_EQ(Sample(before, "planb_shard_rows{map=\"city_to_country\"}"), 0);
  EXPECT_GT(Sample(before, "planb_disk_free_bytes{}"), 0);
  EXPECT_GT(Sample(before, "process_open_fds{}"), 0);

  ASSERT_TRUE(cluster_.LoadAndWaitMerged(ExampleDataFiles(), 1));
  // A BEGIN that does not decode is an upload refused as invalid; a READ of an unknown map is an error read.
  EXPECT_EQ(AskCommand(cluster_.endpoint(0), protocol::Command::kBegin, "not a BEGIN"),
            static_cast<uint16_t>(protocol::Command::kError));
  const auto after = Scrape(base + "/metrics");
  EXPECT_GE(Sample(after, "planb_uploads_total{outcome=\"staged\"}"), 1);
  EXPECT_GE(Sample(after, "planb_batches_merged_total{}"), 1);
  EXPECT_EQ(Sample(after, "planb_upload_refusals_total{reason=\"invalid\"}"), 1);
  EXPECT_GT(Sample(after, "planb_upload_received_bytes_total{}"), 0);
  const double rows = Sample(after, "planb_shard_rows{map=\"city_to_country\"}");
  EXPECT_GT(rows, 0);
  // Rows merged count every row of the batches, a key written twice twice.
  EXPECT_GE(Sample(after, "planb_rows_merged_total{map=\"city_to_country\"}"), rows);
  EXPECT_GE(Sample(after, "planb_content_version{map=\"city_to_country\"}"), 1);
  EXPECT_GT(Sample(after, "planb_shard_bytes{map=\"city_to_country\"}"), 0);
  EXPECT_EQ(Sample(after, "planb_staged_batches{}"), 0);
  EXPECT_EQ(Sample(after, "planb_merge_lag_seconds{}"), 0);
  EXPECT_EQ(Sample(after, "planb_catching_up{map=\"city_to_country\"}"), 0);

  // A remote lookup is timed into the histogram.
  const ProcessResult lookup = ::planb::testing::RunPlanb(
      {"--config", cluster_.dir() + "/proc.ini", "--home", cluster_.dir() + "/proc-home", "lookup", "--remote",
       "city_to_country", "Paris"});
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  const auto read = Scrape(base + "/metrics");
  EXPECT_EQ(Sample(read, "planb_remote_reads_total{outcome=\"ok\"}"), 1);
  EXPECT_EQ(Sample(read, "planb_remote_read_duration_seconds_count{}"), 1);
  EXPECT_EQ(Sample(read, "planb_remote_read_duration_seconds_bucket{le=\"+Inf\"}"), 1);
  // Labelled counters start at 0 for every value they can take, before anything happened to them.
  EXPECT_EQ(Sample(read, "planb_client_refusals_total{right=\"read\"}"), 0);
  EXPECT_EQ(Sample(read, "planb_upload_refusals_total{reason=\"busy\"}"), 0);
  EXPECT_EQ(Sample(read, "planb_snapshot_refusals_total{reason=\"permission_denied\"}"), 0);
  EXPECT_EQ(Sample(read, "planb_remote_reads_total{outcome=\"no_match\"}"), 0);
  EXPECT_EQ(Sample(read, "planb_rows_deleted_total{map=\"country_to_capital\"}"), 0);

  // The shipped alert rules: YAML, the same as docs/operations.md shows, and every planb_ metric they name is one
  // this node exposes (a renamed metric would leave an alert that never fires).
  const std::string rules_path = PLANB_SOURCE_DIR "/packaging/prometheus/planb-alerts.yml";
  const ProcessResult yaml = RunProcess(
      {"/usr/bin/python3",
       {"-c", "import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(len(d['groups'][0]['rules']))",
        rules_path}});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_GE(std::stoi(yaml.out), 8);
  const std::string rules = ::planb::testing::ReadFile(rules_path);
  const std::string body = rules.substr(rules.find("groups:"));
  EXPECT_THAT(::planb::testing::ReadFile(PLANB_SOURCE_DIR "/docs/operations.md"), HasSubstr("```yaml\n" + body + "```"));
  std::set<std::string> exposed;
  for (const auto& [sample, value] : read) exposed.insert(sample.substr(0, sample.find('{')));
  const std::regex metric("planb_[a-z_]+");
  size_t named = 0;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), metric); it != std::sregex_iterator(); ++it) {
    ++named;
    EXPECT_TRUE(exposed.count(it->str()) == 1) << "the alert rules name " << it->str() << ", which no scrape has";
  }
  EXPECT_GE(named, 8u);
}

TEST_F(OperationsTest, HealthAndReadinessAnswerAndBadRequestsGetClearStatuses) {
  const std::string base = StartWithMetrics();
  ASSERT_FALSE(base.empty()) << cluster_.process(0).log();
  EXPECT_EQ(HttpGet(base + "/healthz"), std::make_pair(200, std::string("ok\n")));
  EXPECT_EQ(HttpGet(base + "/readyz"), std::make_pair(200, std::string("ready\n")));
  EXPECT_EQ(HttpGet(base + "/nothing-here").first, 404);
  EXPECT_EQ(HttpGet(base + "/metrics?x=1").first, 200);  // a query string is no other path
  EXPECT_THAT(RawExchange(base, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"),
              HasSubstr(" 405 "));
  EXPECT_THAT(RawExchange(base, "GET /metrics HTTP/1.1\r\n\r\n"), HasSubstr(" 400 "));  // HTTP/1.1 without Host
  EXPECT_EQ(RawExchange(base, "GARBAGE\r\n\r\n"), "");  // not HTTP at all: closed
  // Headers far beyond the per-connection memory cap.
  const std::string huge = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(256 << 10, 'a') + "\r\n\r\n";
  const std::string answer = RawExchange(base, huge);
  EXPECT_THAT(answer, HasSubstr(" 431 "));
  // A client that sends half a request and then nothing is cut off at the idle timeout, and meanwhile others
  // are served.
  const std::string host_port = base.substr(7);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(host_port.substr(host_port.rfind(':') + 1))));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  const int drip = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(::connect(drip, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_GT(::send(drip, "GET /metrics HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL), 0);
  EXPECT_EQ(HttpGet(base + "/healthz").first, 200);
  char byte = 0;
  EXPECT_LE(::recv(drip, &byte, 1, 0), 0);  // closed by the server (its idle timeout)
  ::close(drip);
  EXPECT_EQ(HttpGet(base + "/healthz").first, 200);
  EXPECT_TRUE(cluster_.process(0).running());
}

TEST_F(OperationsTest, ReadyzTurnsUnreadyWhenTheMergeThreadEnds) {
  const std::string base = StartWithMetrics("", {"PLANB_FAULT=merge.thread_exit"});
  ASSERT_FALSE(base.empty()) << cluster_.process(0).log();
  EXPECT_EQ(HttpGet(base + "/readyz").first, 200);
  ASSERT_TRUE(cluster_.LoadAndWaitMerged({ExampleDataFiles()[0]}, 1));  // one batch: the thread ends after it
  ASSERT_TRUE(WaitUntil([&] { return cluster_.process(0).log().find("merge thread: ending") != std::string::npos; },
                        {cluster_.process(0).log_file()}));
  const auto [status, body] = HttpGet(base + "/readyz");
  EXPECT_EQ(status, 503);
  EXPECT_THAT(body, HasSubstr("not ready: the merge thread is not running"));
  EXPECT_EQ(Sample(Scrape(base + "/metrics"), "planb_merge_thread_up{}"), 0);
  EXPECT_EQ(HttpGet(base + "/healthz").first, 200);  // the process itself still answers
}

TEST_F(OperationsTest, ReadyzTurnsUnreadyBelowTheDiskFloor) {
  const std::string base = StartWithMetrics("ready_min_free_disk = 1000000TiB\n");
  ASSERT_FALSE(base.empty()) << cluster_.process(0).log();
  const auto [status, body] = HttpGet(base + "/readyz");
  EXPECT_EQ(status, 503);
  EXPECT_THAT(body, HasSubstr("below ready_min_free_disk"));
  EXPECT_EQ(Sample(Scrape(base + "/metrics"), "planb_disk_ready_floor_bytes{}"), 1000000.0 * 1099511627776.0);
}

TEST_F(OperationsTest, BadMetricsBindIsRefused) {
  for (const char* bad : {"nonsense", "127.0.0.1", "127.0.0.1:99999", "300.1.1.1:80", "[zz]:80", ":80"}) {
    cluster_.top_level_extra = std::string("metrics_bind = ") + bad + "\n";
    ASSERT_FALSE(cluster_.StartNode(0)) << bad;
    EXPECT_THAT(cluster_.process(0).log(), HasSubstr("metrics_bind")) << bad;
    EXPECT_THAT(cluster_.process(0).log(), HasSubstr("is not HOST:PORT")) << bad;
  }
  // In use: another socket holds the port.
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t length = sizeof address;
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string port = std::to_string(ntohs(address.sin_port));
  cluster_.top_level_extra = "metrics_bind = 127.0.0.1:" + port + "\n";
  ASSERT_FALSE(cluster_.StartNode(0));
  EXPECT_THAT(cluster_.process(0).log(),
              HasSubstr("metrics_bind: cannot listen on 127.0.0.1:" + port + ": Address already in use"));
  ::close(holder);
}

TEST_F(OperationsTest, SighupReopensTheLogFileAndTheNodeKeepsServing) {
  const std::string log = cluster_.dir() + "/node.log";
  cluster_.top_level_extra = "log_file = " + log + "\n";
  ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
  ASSERT_TRUE(WaitUntil([&] { std::string text; return ReadSmallFile(log, &text).ok() && text.find("serving ") != std::string::npos; },
                        {log}));
  std::filesystem::rename(log, log + ".1");  // what logrotate does before its postrotate kill -HUP
  const pid_t pid = cluster_.process(0).pid();
  ASSERT_EQ(::kill(pid, SIGHUP), 0);
  ASSERT_TRUE(WaitUntil([&] { std::string text; return ReadSmallFile(log, &text).ok() && text.find("SIGHUP: reopened log_file") != std::string::npos; },
                        {log}));
  EXPECT_TRUE(cluster_.process(0).running());
  ASSERT_TRUE(cluster_.LoadAndWaitMerged(ExampleDataFiles(), 1));
  std::string text;
  ASSERT_TRUE(ReadSmallFile(log, &text).ok());
  EXPECT_THAT(text, HasSubstr("merged "));  // new lines go to the new file
  ASSERT_TRUE(ReadSmallFile(log + ".1", &text).ok());
  EXPECT_THAT(text, Not(HasSubstr("merged ")));
  EXPECT_EQ(cluster_.process(0).Stop(), 0);
}

TEST_F(OperationsTest, SighupWithoutALogFileDoesNotStopTheNode) {
  ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
  ASSERT_EQ(::kill(cluster_.process(0).pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitUntil([&] { return cluster_.process(0).log().find("SIGHUP: no log_file") != std::string::npos; },
                        {cluster_.process(0).log_file()}));
  EXPECT_TRUE(cluster_.process(0).running());
  EXPECT_EQ(cluster_.process(0).Stop(), 0);
}

TEST_F(OperationsTest, AnUnwritableOrSymlinkedLogFileIsRefused) {
  cluster_.top_level_extra = "log_file = " + cluster_.dir() + "/no/such/dir/node.log\n";
  ASSERT_FALSE(cluster_.StartNode(0));
  EXPECT_THAT(cluster_.process(0).log(), HasSubstr("log_file " + cluster_.dir() + "/no/such/dir/node.log: cannot open"));
  const std::string link = cluster_.dir() + "/link.log";
  std::filesystem::create_symlink(cluster_.dir() + "/elsewhere.log", link);
  cluster_.top_level_extra = "log_file = " + link + "\n";
  ASSERT_FALSE(cluster_.StartNode(0));
  EXPECT_THAT(cluster_.process(0).log(), HasSubstr("it is a symbolic link"));
  EXPECT_FALSE(std::filesystem::exists(cluster_.dir() + "/elsewhere.log"));
}

TEST_F(OperationsTest, SigtermStopsWithinTenSecondsWhileAnotherProcessHoldsTheMergeLock) {
  ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
  FileLock held;  // as `planb maintain` holds it
  ASSERT_TRUE(held.Acquire(cluster_.home(0) + "/merging/.lock").ok());
  // A batch staged while the lock is held: the node's merge thread waits for the lock.
  const ProcessResult load = ::planb::testing::RunPlanb(
      {"--config", cluster_.WriteProcessingConfig(), "--home", cluster_.dir() + "/proc-home", "load", "--no-wait",
       ExampleDataFiles()[0]});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& entry : std::filesystem::directory_iterator(cluster_.home(0) + "/staging")) {
      if (entry.path().extension() == ".zip") return true;
    }
    return false;
  }, {cluster_.home(0) + "/staging"}));
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(cluster_.process(0).Stop(std::chrono::seconds(10)), 0) << cluster_.process(0).log();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_THAT(cluster_.process(0).log(), HasSubstr("stopped"));
  // The batch waits, staged, for the next start.
  bool staged = false;
  for (const auto& entry : std::filesystem::directory_iterator(cluster_.home(0) + "/staging")) {
    staged = staged || entry.path().extension() == ".zip";
  }
  EXPECT_TRUE(staged);
}

TEST_F(OperationsTest, UnderSystemdTheNodeNotifiesReadyAndStopping) {
  const std::string socket_path = cluster_.dir() + "/notify.sock";
  const int listener = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_TRUE(cluster_.StartNode(0, {"NOTIFY_SOCKET=" + socket_path})) << cluster_.process(0).log();
  char message[256] = {};
  ssize_t n = ::recv(listener, message, sizeof message - 1, 0);  // the node is ready: READY=1 was sent before
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(message, static_cast<size_t>(n)), "READY=1");
  EXPECT_EQ(cluster_.process(0).Stop(), 0) << cluster_.process(0).log();
  n = ::recv(listener, message, sizeof message - 1, MSG_DONTWAIT);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(message, static_cast<size_t>(n)), "STOPPING=1");
  ::close(listener);
}

TEST_F(OperationsTest, TheReadyFileIsRemovedWhenTheNodeStops) {
  ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
  const std::string ready = cluster_.process(0).ready_file();
  EXPECT_TRUE(std::filesystem::exists(ready));
  EXPECT_EQ(cluster_.process(0).Stop(), 0) << cluster_.process(0).log();
  EXPECT_FALSE(std::filesystem::exists(ready));
}

TEST_F(OperationsTest, JsonLogLinesParseOneByOneAndEachNamesItsEvent) {
  cluster_.top_level_extra = "log_format = json\nlog_level = debug\n";
  ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
  ASSERT_TRUE(cluster_.LoadAndWaitMerged(ExampleDataFiles(), 1));
  EXPECT_EQ(AskCommand(cluster_.endpoint(0), protocol::Command::kBegin, "not a BEGIN"),
            static_cast<uint16_t>(protocol::Command::kError));
  ASSERT_EQ(cluster_.process(0).Stop(), 0);
  std::istringstream lines(cluster_.process(0).log());
  std::string line;
  std::map<std::string, int> events;
  int parsed = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(object.is_discarded()) << line;
    for (const char* field : {"time", "level", "node", "event", "msg"}) {
      ASSERT_TRUE(object.contains(field) && object[field].is_string()) << field << " in " << line;
    }
    EXPECT_EQ(object["node"], "node1");
    EXPECT_NE(object["event"], "node") << "a line no event names: " << line;
    ++events[object["event"].get<std::string>()];
    ++parsed;
  }
  EXPECT_GE(parsed, 6);
  for (const char* event : {"serve.started", "upload.staged", "merge.done", "upload.refused", "serve.stopping",
                            "serve.stopped"}) {
    EXPECT_GE(events[event], 1) << event;
  }
}

TEST_F(OperationsTest, LogLevelWarnLeavesOutInformationButNotRefusals) {
  cluster_.top_level_extra = "log_level = warn\n";
  ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
  ASSERT_TRUE(cluster_.LoadAndWaitMerged(ExampleDataFiles(), 1));
  EXPECT_EQ(AskCommand(cluster_.endpoint(0), protocol::Command::kBegin, "not a BEGIN"),
            static_cast<uint16_t>(protocol::Command::kError));
  ASSERT_TRUE(WaitUntil([&] { return cluster_.process(0).log().find("upload error") != std::string::npos; },
                        {cluster_.process(0).log_file()}));
  EXPECT_THAT(cluster_.process(0).log(), Not(HasSubstr("staged batch")));
  EXPECT_THAT(cluster_.process(0).log(), Not(HasSubstr("merged ")));
}

TEST(CommandLogs, WithJsonLogsACommandsMessagesAreJsonObjectsWithTheirLevel) {
  TempDir dir;
  WriteFile(dir / "planb.ini", "log_format = json\n[map.sample]\ntype = state\n");
  const ProcessResult missing = ::planb::testing::RunPlanb({"--config", dir / "planb.ini", "--home", dir / "home",
                                                            "lookup", "nosuchmap", "k"});
  EXPECT_EQ(missing.exit_code, 2);
  const nlohmann::json object = nlohmann::json::parse(missing.err, nullptr, false);
  ASSERT_FALSE(object.is_discarded()) << missing.err;
  EXPECT_EQ(object["level"], "error");
  EXPECT_EQ(object["event"], "command.error");
  EXPECT_EQ(object["command"], "lookup");
  EXPECT_THAT(object["msg"].get<std::string>(), HasSubstr("nosuchmap"));
  // log_level = error leaves a note out, and keeps errors.
  WriteFile(dir / "planb.ini", "log_level = error\n[map.sample]\ntype = state\n");
  const ProcessResult quiet = ::planb::testing::RunPlanb({"--config", dir / "planb.ini", "--home", dir / "home",
                                                          "lookup", "nosuchmap", "k"});
  EXPECT_EQ(quiet.exit_code, 2);
  EXPECT_THAT(quiet.err, StartsWith("planb: "));
}

TEST(CommandLogs, UnknownLogLevelOrFormatIsRefusedNamingTheKey) {
  TempDir dir;
  for (const std::string& line : {"log_level = loud", "log_format = xml", "log_level =", "metrics_bind = x:y",
                                  "ready_min_free_disk = lots", "ready_min_free_disk = -1GiB",
                                  "ready_min_free_disk = 99999999999999999999", "log_file = "}) {
    WriteFile(dir / "planb.ini", line + "\n[map.sample]\ntype = state\n");
    const ProcessResult refused = ::planb::testing::RunPlanb({"--config", dir / "planb.ini", "stores"});
    EXPECT_EQ(refused.exit_code, 2) << line;
    EXPECT_THAT(refused.err, HasSubstr(line.substr(0, line.find(' ')) + ":")) << line;
  }
}

}  // namespace
}  // namespace planb
