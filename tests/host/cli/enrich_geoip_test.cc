// The classic enrichment end to end on real data (../shared/data, skipped with a message when absent): Tor's IPv4
// geoip ranges loaded as they come (planb load --format csv of the gzip file) into a ranged map with
// key_format = ipv4, then the Apache log's client addresses enriched with their country by planb enrich, each
// answer checked against a binary search of the file's (sorted, disjoint) ranges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "planb/ip_address.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::ProcessSpec;

struct Range {
  uint32_t from;
  uint32_t to;
  std::string country;
};

std::vector<std::string> GunzipLines(const std::string& path) {
  std::vector<std::string> lines;
  FILE* pipe = ::popen(("gzip -dc '" + path + "'").c_str(), "r");
  if (pipe == nullptr) return lines;
  char buffer[8192];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    lines.push_back(line);
  }
  ::pclose(pipe);
  return lines;
}

TEST(EnrichGeoIp, ApacheClientsGetTheirCountryFromTorGeoIpRanges) {
  const std::string dir = testing::SharedDataDir();
  const std::string geoip = dir + "/tor-geoip-ipv4.csv.gz";
  const std::string log = dir + "/apache_logs.gz";
  if (dir.empty() || !std::ifstream(geoip).good() || !std::ifstream(log).good()) {
    GTEST_SKIP() << geoip << " or " << log << " not found: shared data absent";
  }
  std::vector<Range> ranges;
  for (const std::string& line : GunzipLines(geoip)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find(',');
    const size_t b = line.find(',', a + 1);
    ranges.push_back({static_cast<uint32_t>(std::stoul(line.substr(0, a))),
                      static_cast<uint32_t>(std::stoul(line.substr(a + 1, b - a - 1))), line.substr(b + 1)});
  }
  ASSERT_GT(ranges.size(), 100000u);
  testing::CliEnv env("[map.geo]\ntype = ranged\nkey_format = ipv4\n");
  const ProcessResult load = env.Run({"load", "--format", "csv", "--columns", "from,to,country", "--comments",
                                      "--map", "geo", "--from", "from", "--to", "to", "--value", "country", geoip});
  ASSERT_EQ(load.exit_code, 0) << load.err;

  std::string events;
  std::vector<std::string> ips;
  for (const std::string& line : GunzipLines(log)) {
    const std::string ip = line.substr(0, line.find(' '));
    ip::Address address;
    bool v4 = false;
    if (ip::ParseAddress(ip, &address, &v4) != nullptr || !v4) continue;  // the log has a few IPv6 clients
    ips.push_back(ip);
    events += "{\"client\":{\"ip\":\"" + ip + "\"},\"n\":" + std::to_string(ips.size()) + "}\n";
  }
  ASSERT_GT(ips.size(), 9000u);
  ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = {"--home", env.home(), "--config", env.config(), "enrich", "--lookup", "geo.country=geo:client.ip",
               "--fallback", "geo.country=none"};
  spec.stdin_text = events;
  const ProcessResult r = testing::RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("planb enrich: " + std::to_string(ips.size()) + " events, 0 malformed"));

  size_t at = 0;
  size_t found = 0;
  for (size_t i = 0; i < ips.size(); ++i) {
    const size_t end = r.out.find('\n', at);
    ASSERT_NE(end, std::string::npos) << "output ends after " << i << " events";
    const std::string line = r.out.substr(at, end - at);
    at = end + 1;
    ip::Address address;
    bool v4 = false;
    ASSERT_EQ(ip::ParseAddress(ips[i], &address, &v4), nullptr);
    const uint32_t x = ip::Ipv4Of(address);
    auto it = std::upper_bound(ranges.begin(), ranges.end(), x,
                               [](uint32_t value, const Range& range) { return value < range.from; });
    std::string expected = "none";
    if (it != ranges.begin() && x <= std::prev(it)->to) expected = std::prev(it)->country;
    found += expected != "none";
    ASSERT_EQ(line, "{\"client\":{\"ip\":\"" + ips[i] + "\"},\"n\":" + std::to_string(i + 1) +
                        ",\"geo\":{\"country\":\"" + expected + "\"}}");
  }
  EXPECT_GT(found, ips.size() / 2);
}

}  // namespace
}  // namespace planb
