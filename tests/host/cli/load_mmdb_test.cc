// `planb load --format mmdb` (issue 41): every network of a MaxMind DB file (made at test time by MaxMind's Perl
// writer) into a ranged ip / ipv4 map, records as JSON values; `planb lookup` then answers every sampled address
// with the record `mmdblookup` prints for it (IPv4 in an IPv6 tree, ::ffff: forms, nested networks, every value
// type), and misses where mmdblookup finds nothing. A malformed file, an IPv6 network for an ipv4 map, a map of
// the wrong kind and column options are refused naming the input, nothing staged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/cli_test_env.h"
#include "support/mmdb_fixture.h"

namespace planb {
namespace {

using json = nlohmann::json;
using testing::CliEnv;
using testing::MakeMmdb;
using testing::MmdblookupLines;
using testing::MmdblookupLinesFor;
using testing::ProcessResult;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kConfig[] =
    "[map.geo]\ntype = ranged\nkey_format = ip\n"
    "[map.geo4]\ntype = ranged\nkey_format = ipv4\n"
    "[map.hist]\ntype = temporal_ranged\nkey_format = ip\n"
    "[map.cities]\ntype = state\n"
    "[map.numbers]\ntype = ranged\n";

json Types() {
  return {{"country", "map"},    {"iso_code", "utf8_string"}, {"names", json::array({"array", "utf8_string"})}, {"lat", "double"},
          {"pop", "uint32"},     {"eu", "boolean"},           {"city", "utf8_string"},             {"big", "uint128"}};
}

// mmdblookup's answer for an address outside every network.
bool Misses(const std::vector<std::string>& lines) {
  return lines.size() == 1 && lines[0].find("Could not find an entry for this IP address") != std::string::npos;
}

json Network(const std::string& network, const json& record) { return {{"network", network}, {"record", record}}; }

json Ipv6File() {
  return {{"ip_version", 6},
          {"record_size", 28},
          {"alias_ipv6_to_ipv4", true},
          {"database_type", "Test-City"},
          {"types", Types()},
          {"networks",
           {Network("81.0.0.0/8", {{"country", {{"iso_code", "GB"}, {"names", {"UK", "Britain"}}}}, {"eu", false}}),
            Network("81.2.69.0/24", {{"city", "London"}, {"lat", 51.5142}, {"pop", 8900000}}),
            Network("2001:db8::/32", {{"country", {{"iso_code", "DE"}}}, {"eu", true}, {"big", "340282366920938463463374607431768211455"}}),
            Network("2001:db8:1::/48", {{"city", "Berlin \"Mitte\""}, {"lat", -0.5}})}}};
}

json Ipv4File() {
  return {{"ip_version", 4},
          {"record_size", 24},
          {"types", Types()},
          {"networks", {Network("10.0.0.0/8", {{"city", "ten"}}), Network("10.1.0.0/16", {{"city", "ten-one"}})}}};
}

class LoadMmdb : public ::testing::Test {
 protected:
  std::string Make(const std::string& name, const json& description) {
    const std::string path = env_.Write(name, "");
    const std::string made = MakeMmdb(path, description);
    EXPECT_EQ(made, "");
    return path;
  }

  // A refused load: exit 2, `message` on stderr, nothing staged or merged.
  void ExpectRefused(const std::vector<std::string>& args, const std::string& message) const {
    std::vector<std::string> all{"load", "--format", "mmdb"};
    all.insert(all.end(), args.begin(), args.end());
    const ProcessResult r = env_.Run(all);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_THAT(testing::ShardDataFiles(env_.home()), IsEmpty());
  }

  // `planb lookup MAP ADDRESS` against mmdblookup on `file` for the same address.
  void ExpectAsMmdblookup(const std::string& map, const std::string& file, const std::string& address) const {
    const ProcessResult r = env_.Run({"lookup", map, address});
    const std::vector<std::string> theirs = MmdblookupLines(file, address);
    if (r.exit_code == 1) {
      EXPECT_TRUE(Misses(theirs)) << address << ": planb misses, mmdblookup answers";
      return;
    }
    ASSERT_EQ(r.exit_code, 0) << address << ": " << r.err;
    EXPECT_EQ(MmdblookupLinesFor(r.out.substr(0, r.out.size() - 1), Types()), theirs) << address;
  }

  CliEnv env_{kConfig};
};

TEST_F(LoadMmdb, EveryAddressAnswersAsMmdblookupDoes) {
  const std::string file = Make("city.mmdb", Ipv6File());
  const ProcessResult load = env_.Run({"load", "--format", "mmdb", "--map", "geo", file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (const char* address : {"81.0.0.0", "81.2.68.255", "81.2.69.0", "81.2.69.160", "81.2.69.255", "81.2.70.0",
                              "81.255.255.255", "::ffff:81.2.69.160", "2001:db8::", "2001:db8:0:ffff::1",
                              "2001:db8:1::", "2001:db8:1:ffff:ffff:ffff:ffff:ffff", "2001:db8:2::1",
                              "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}) {
    ExpectAsMmdblookup("geo", file, address);
  }
  // Outside every network: both miss.
  for (const char* address : {"80.255.255.255", "82.0.0.0", "2001:db9::", "8.8.8.8"}) {
    const ProcessResult r = env_.Run({"lookup", "geo", address});
    EXPECT_EQ(r.exit_code, 1) << address << ": " << r.out;
    EXPECT_TRUE(Misses(MmdblookupLines(file, address))) << address;
  }
  // The record nested, typed as the file has it (an integer stays an integer, a double a double).
  const json answer = json::parse(env_.Run({"lookup", "geo", "81.2.69.160", "--format", "json"}).out);
  EXPECT_EQ(answer[0]["value"]["city"], "London");
  EXPECT_TRUE(answer[0]["value"]["pop"].is_number_integer());
  EXPECT_TRUE(answer[0]["value"]["lat"].is_number_float());
  const std::string big = env_.Run({"lookup", "geo", "2001:db8:5::1"}).out;
  EXPECT_THAT(big, HasSubstr("\"big\":340282366920938463463374607431768211455")) << "uint128 exact";
  // A temporal ranged map takes them too, at the file's build time.
  const ProcessResult hist = env_.Run({"load", "--format", "mmdb", "--map", "hist", file});
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  ExpectAsMmdblookup("hist", file, "81.2.69.1");
}

TEST_F(LoadMmdb, AnIpv4FileGoesIntoAnIpv4MapAndAnIpv6NetworkDoesNot) {
  const std::string v4 = Make("v4.mmdb", Ipv4File());
  const ProcessResult load = env_.Run({"load", "--format", "mmdb", "--map", "geo4", v4});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (const char* address : {"10.0.0.1", "10.1.2.3", "10.2.0.0", "11.0.0.0"}) ExpectAsMmdblookup("geo4", v4, address);

  const std::string v6 = Make("v6.mmdb", Ipv6File());
  CliEnv fresh(kConfig);
  const ProcessResult refused = fresh.Run({"load", "--format", "mmdb", "--map", "geo4", v6});
  EXPECT_EQ(refused.exit_code, 2);
  // The first IPv6 network in address order: the /32's first piece, beside the nested /48.
  EXPECT_THAT(refused.err, HasSubstr(v6 + ": network 2001:db8::/48 is IPv6, and map geo4 has key_format = ipv4 "
                                          "(give it key_format = ip)"));
  EXPECT_THAT(testing::ShardDataFiles(fresh.home()), IsEmpty()) << "nothing of the file's IPv4 networks either";
}

TEST_F(LoadMmdb, BadInputIsRefusedNamingItAndNothingIsStaged) {
  const std::string good = Make("good.mmdb", Ipv6File());
  const std::string bytes = testing::ReadFile(good);
  const std::string truncated = env_.Write("truncated.mmdb", bytes.substr(0, bytes.size() / 2));
  ExpectRefused({"--map", "geo", truncated}, truncated + ": ");
  const std::string text = env_.Write("not.mmdb", "this is not a MaxMind DB file\n");
  ExpectRefused({"--map", "geo", text}, text + ": ");
  ExpectRefused({"--map", "geo", env_.home() + "/missing.mmdb"}, "missing.mmdb");
  ExpectRefused({"--map", "cities", good}, "--format mmdb: map cities is a state map with key_format number; "
                                           "networks go into a ranged (or temporal_ranged) map with key_format = ip");
  ExpectRefused({"--map", "numbers", good}, "map numbers is a ranged map with key_format number");
  ExpectRefused({"--map", "nowhere", good}, "--map nowhere: no such map in the config");
  ExpectRefused({good}, "--map: the map the networks go to is required with --format mmdb");
  ExpectRefused({"--map", "geo", "--key", "k", good}, "--format mmdb takes --map only");
  ExpectRefused({"--map", "geo", "-"}, "--format mmdb reads files, not standard input");
}

}  // namespace
}  // namespace planb
