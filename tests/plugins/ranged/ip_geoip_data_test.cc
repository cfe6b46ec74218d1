// Real data (../shared/data, skipped with a message when absent): Tor's geoip files loaded through the whole path
// (planb load --format csv of the gzip file as it is -> batch -> merge -> MapReader): tor-geoip-ipv6.csv.gz into a
// ranged map with key_format = ip, tor-geoip-ipv4.csv.gz (decimal ranges) into one with key_format = ipv4. A sample of lookups
// (range ends, insides, gaps) is checked against a straightforward scan of the file.
#include <gtest/gtest.h>
#include <stdio.h>

#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/ip_address.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ProcessResult;
using ::planb::testing::RunPlanb;
using ::planb::testing::WriteFile;
using ::planb::testing::SharedDataDir;
using ::planb::testing::TempDir;
using U128 = unsigned __int128;

struct GeoRange {
  U128 from = 0;
  U128 to = 0;
  std::string country;
};

U128 ToU128(const ip::Address& a) {
  U128 v = 0;
  for (uint8_t b : a.bytes) v = (v << 8) | b;
  return v;
}

ip::Address FromU128(U128 v) {
  ip::Address a;
  for (int i = 15; i >= 0; --i, v >>= 8) a.bytes[i] = static_cast<uint8_t>(v);
  return a;
}

std::string Text(U128 v, bool v4) {
  if (v4) return std::to_string(static_cast<uint64_t>(v));  // decimal, as the IPv4 file writes it
  char text[ip::kMaxText];
  return std::string(text, ip::Format(FromU128(v), text));
}

// The data lines of a gzip CSV file (comment lines left out), each split at its commas: through gzip -dc.
bool ReadGeoIp(const std::string& path, bool v4, std::vector<GeoRange>* out, std::string* why) {
  FILE* pipe = ::popen(("gzip -dc '" + path + "'").c_str(), "r");
  if (pipe == nullptr) {
    *why = "cannot run gzip";
    return false;
  }
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.empty() || text[0] == '#') continue;
    const size_t a = text.find(',');
    const size_t b = a == std::string::npos ? a : text.find(',', a + 1);
    if (b == std::string::npos) {
      *why = "a line without three fields: " + text;
      ::pclose(pipe);
      return false;
    }
    GeoRange r;
    r.country = text.substr(b + 1);
    const std::string from = text.substr(0, a);
    const std::string to = text.substr(a + 1, b - a - 1);
    if (v4) {
      r.from = std::stoull(from);
      r.to = std::stoull(to);
    } else {
      ip::Address x;
      ip::Address y;
      bool ipv4 = false;
      if (ip::ParseAddress(from, &x, &ipv4) != nullptr || ip::ParseAddress(to, &y, &ipv4) != nullptr) {
        *why = "a line with a malformed address: " + text;
        ::pclose(pipe);
        return false;
      }
      r.from = ToU128(x);
      r.to = ToU128(y);
    }
    out->push_back(std::move(r));
  }
  return ::pclose(pipe) == 0 && !out->empty();
}

// The narrowest range holding x (as the store's rule picks), by scanning them all; nullptr for none.
const GeoRange* Scan(const std::vector<GeoRange>& ranges, U128 x) {
  const GeoRange* best = nullptr;
  for (const GeoRange& r : ranges) {
    if (r.from > x || x > r.to) continue;
    if (best == nullptr || r.to - r.from < best->to - best->from ||
        (r.to - r.from == best->to - best->from && r.from > best->from)) {
      best = &r;
    }
  }
  return best;
}

void CheckFile(const std::string& file, const std::string& key_format) {
  const std::string dir = SharedDataDir();
  const std::string path = dir + "/" + file;
  if (dir.empty() || !std::ifstream(path).good()) GTEST_SKIP() << path << " not found: shared data absent";
  const bool v4 = key_format == "ipv4";
  std::vector<GeoRange> ranges;
  std::string why;
  ASSERT_TRUE(ReadGeoIp(path, v4, &ranges, &why)) << path << ": " << why;

  TempDir tmp;
  const std::string config = tmp / "planb.ini";
  WriteFile(config, "[map.geo]\ntype = ranged\nkey_format = " + key_format + "\nmax_store_size = 2GiB\n");
  // The file as it is, gzip, 20 '#' lines of attribution and no header, through the real planb load.
  const ProcessResult load =
      RunPlanb({"--config", config, "--home", tmp / "home", "load", "--format", "csv", "--columns",
                "from,to,country", "--comments", "--map", "geo", "--from", "from", "--to", "to", "--value", "country",
                path});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_NE(load.out.find(std::to_string(ranges.size()) + " records"), std::string::npos) << load.out;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(tmp.path(), "[map.geo]\ntype = ranged\nkey_format = " + key_format +
                                             "\nmax_store_size = 2GiB\n", &runtime);
  ASSERT_TRUE(s.ok()) << s.message();

  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("geo", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  std::mt19937_64 rng(17);
  std::vector<U128> probes;
  for (int i = 0; i < 150; ++i) {
    const GeoRange& r = ranges[rng() % ranges.size()];
    probes.push_back(r.from);
    probes.push_back(r.to);
    probes.push_back(r.from + (r.to - r.from) / 2);
    if (r.from != 0) probes.push_back(r.from - 1);  // often in a gap
    if (r.to != (v4 ? U128{UINT32_MAX} : ~U128{0})) probes.push_back(r.to + 1);
  }
  probes.push_back(0);
  size_t hits = 0;
  for (U128 x : probes) {
    // Looked up as address text in both formats (ipv4 also takes the decimal; dotted is what users write).
    const std::string key = v4 ? Text(ToU128(ip::MapIpv4(static_cast<uint32_t>(x))), false) : Text(x, false);
    LookupKey lookup;
    lookup.key = Bytes(key);
    Row row;
    ErrorBuffer error;
    const Code code = reader.Lookup(lookup, &row, &error);
    const GeoRange* expected = Scan(ranges, x);
    if (expected == nullptr) {
      EXPECT_EQ(code, Code::kNotFound) << key << ": " << error.message;
      continue;
    }
    ASSERT_EQ(code, Code::kOk) << key << ": " << error.message;
    ++hits;
    EXPECT_EQ(row.value.view(), expected->country) << key;
    ASSERT_TRUE(row.has_addresses);
    ip::Address from;
    std::memcpy(from.bytes, row.address_from, 16);
    EXPECT_EQ(v4 ? U128{ip::Ipv4Of(from)} : ToU128(from), expected->from) << key;
  }
  EXPECT_GT(hits, probes.size() / 2);
}

TEST(IpGeoIpData, Ipv6FileInAnIpMap) { CheckFile("tor-geoip-ipv6.csv.gz", "ip"); }
TEST(IpGeoIpData, Ipv4FileInAnIpv4Map) { CheckFile("tor-geoip-ipv4.csv.gz", "ipv4"); }

}  // namespace
}  // namespace planb
