// Ranged maps with key_format = ip and ipv4 through the real planb binary: lookups by address, KeyStart/KeyEnd
// printed as addresses in table, csv and json, `--where` on addresses narrowing the scan (--explain), malformed
// addresses in lookups and in --where refused naming them, and a key_format change refused at open.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ClusterFixture;
using testing::ProcessResult;
using testing::ReferenceData;
using ::testing::HasSubstr;
using ::testing::Not;
using Strings = std::vector<std::string>;

constexpr char kConfig[] =
    "[map.geo]\ntype = ranged\nkey_format = ip\n"
    "[map.geo4]\ntype = ranged\nkey_format = ipv4\n"
    "[map.tgeo]\ntype = temporal_ranged\nkey_format = ip\n";

std::string KeyRef(const std::string& map, const std::string& key, const std::string& value) {
  return "<reference><map>" + map + "</map><key>" + key + "</key><value>" + value + "</value></reference>\n";
}

void LoadGeo(const CliEnv& env) {
  std::string body;
  for (const char* map : {"geo", "tgeo"}) {
    body += KeyRef(map, "10.0.0.0/8", "ten") + KeyRef(map, "10.1.0.0/16", "ten-one") +
            KeyRef(map, "2001:db8::/32", "doc") + KeyRef(map, "::/0", "all") + KeyRef(map, "192.168.1.1", "host");
  }
  body += KeyRef("geo4", "10.0.0.0/8", "ten") + KeyRef("geo4", "192.168.1.1", "host");
  body += "<reference><map>geo4</map><from>16777216</from><to>16777471</to><value>decimal</value></reference>\n";
  const ProcessResult r = env.Load({env.Write("geo.xml", ReferenceData(body))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(IpKeysCli, LooksUpAddresses) {
  CliEnv env(kConfig);
  LoadGeo(env);
  const std::pair<const char*, const char*> expected[] = {
      {"10.1.2.3", "ten-one"}, {"10.2.0.0", "ten"},   {"2001:db8::1", "doc"}, {"2001:DB8:0:0::FFFF", "doc"},
      {"::1", "all"},          {"192.168.1.1", "host"}, {"::ffff:10.1.0.0", "ten-one"}};
  for (const auto& [key, value] : expected) {
    for (const char* map : {"geo", "tgeo"}) {
      const ProcessResult r = env.Run({"lookup", map, key});
      EXPECT_EQ(r.exit_code, 0) << map << " " << key << ": " << r.err;
      EXPECT_EQ(r.out, std::string(value) + "\n") << map << " " << key;
    }
  }
  for (const auto& [key, value] : {std::pair{"10.200.0.1", "ten"}, std::pair{"1.0.0.9", "decimal"}}) {
    const ProcessResult r = env.Run({"lookup", "geo4", key});
    EXPECT_EQ(r.exit_code, 0) << key << ": " << r.err;
    EXPECT_EQ(r.out, std::string(value) + "\n") << key;
  }
  ProcessResult r = env.Run({"lookup", "geo4", "11.0.0.0"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Several keys, json: the keys are text.
  r = env.Run({"lookup", "geo", "10.9.9.9", "8.8.8.8", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"key\":\"10.9.9.9\""));
  EXPECT_THAT(r.out, HasSubstr("\"value\":\"ten\""));
  EXPECT_THAT(r.out, HasSubstr("\"key\":\"8.8.8.8\",\"value\":\"all\""));
}

TEST(IpKeysCli, RefusesMalformedLookupKeys) {
  CliEnv env(kConfig);
  LoadGeo(env);
  for (const char* bad : {"10.1", "10.0.0.0/8", "::g", "256.0.0.1"}) {
    const ProcessResult r = env.Run({"lookup", "geo", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr(std::string("'") + bad + "'")) << bad;
  }
  const ProcessResult r = env.Run({"lookup", "geo4", "2001:db8::1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'2001:db8::1' is not an IPv4 address"));
  EXPECT_THAT(r.err, Not(HasSubstr("/shards/"))) << "the input is at fault, not the shard";
}

// A bad key read from --keys-from is named by its file and line (blank lines count), not by the shard's path.
TEST(IpKeysCli, ABadKeyFromAFileNamesTheFileAndLine) {
  CliEnv env(kConfig);
  LoadGeo(env);
  const std::string keys = env.Write("keys.txt", "10.1.2.3\n\n10.1.2\n8.8.8.8\n");
  const ProcessResult r = env.Run({"lookup", "geo", "--keys-from", keys});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  // The store type refused the key; the host names it and the call (docs/plugins.md).
  EXPECT_THAT(r.err, HasSubstr("planb: --keys-from " + keys + " line 3: store type 'ranged' ("));
  EXPECT_THAT(r.err, HasSubstr("libplanb_ranged_store.so): Store::Get: lookup key '10.1.2' is not an IP address"));
  EXPECT_THAT(r.err, HasSubstr("(map geo)"));
  EXPECT_THAT(r.err, Not(HasSubstr("/shards/")));
}

// Keys are matched as given: blanks around an address are refused by lookup (exit 2) and a miss for enrich,
// never trimmed into an answer.
TEST(IpKeysCli, BlanksAroundAnAddressAreNotTrimmed) {
  CliEnv env(kConfig);
  LoadGeo(env);
  const ProcessResult exact = env.Run({"lookup", "geo", "10.1.2.3"});
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  for (const char* blank : {" 10.1.2.3", "10.1.2.3 ", "10.1.2.3\t"}) {
    const ProcessResult r = env.Run({"lookup", "geo", blank});
    EXPECT_EQ(r.exit_code, 2) << blank;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr("has blanks around it: addresses are matched as given (map geo)"));
  }
  const std::string events = env.Write("events.jsonl", "{\"ip\":\" 10.1.2.3\"}\n{\"ip\":\"10.1.2.3\"}\n");
  const ProcessResult enriched = env.Run({"enrich", "--lookup", "g=geo:ip", "--on-miss", "tag", events});
  ASSERT_EQ(enriched.exit_code, 0) << enriched.err;
  const std::string value = exact.out.substr(0, exact.out.size() - 1);  // a plain word: no JSON escapes needed
  EXPECT_EQ(enriched.out, "{\"ip\":\" 10.1.2.3\",\"planb_miss\":[\"g\"]}\n{\"ip\":\"10.1.2.3\",\"g\":\"" +
                              value + "\"}\n");
}

TEST(IpKeysCli, QueryPrintsAddresses) {
  CliEnv env(kConfig);
  LoadGeo(env);
  ProcessResult r = env.Run({"query", "geo", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "KeyStart,KeyEnd,ValueType,Value\n"
            "::,ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,string,all\n"
            "10.0.0.0,10.255.255.255,string,ten\n"
            "10.1.0.0,10.1.255.255,string,ten-one\n"
            "192.168.1.1,192.168.1.1,string,host\n"
            "2001:db8::,2001:db8:ffff:ffff:ffff:ffff:ffff:ffff,string,doc\n");
  r = env.Run({"query", "geo4", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("{\"KeyStart\":\"1.0.0.0\",\"KeyEnd\":\"1.0.0.255\""));
  EXPECT_THAT(r.out, HasSubstr("{\"KeyStart\":\"10.0.0.0\",\"KeyEnd\":\"10.255.255.255\""));
  r = env.Run({"query", "tgeo"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2001:db8:: "));
  EXPECT_THAT(r.out, HasSubstr("10.1.0.0 "));
}

TEST(IpKeysCli, WhereOnAddressesNarrowsTheScan) {
  CliEnv env(kConfig);
  LoadGeo(env);
  for (const char* map : {"geo", "tgeo", "geo4"}) {
    const ProcessResult r = env.Run({"query", map, "--where", "KeyStart >= '10.0.0.0' and KeyStart < '10.255.0.0'",
                                     "--format", "csv", "--explain"});
    ASSERT_EQ(r.exit_code, 0) << map << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("(narrowed)")) << map;
    EXPECT_THAT(r.out, HasSubstr("10.0.0.0,10.255.255.255")) << map;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("192.168.1.1"))) << map;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("all"))) << map;
  }
  // The ranges holding an address: the narrowest first in LMDB order is not asked, every holder is printed.
  ProcessResult r = env.Run({"query", "geo", "--where", "KeyStart <= '10.1.2.3' and KeyEnd >= '10.1.2.3'", "--format",
                             "csv", "--explain"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(narrowed)"));
  EXPECT_EQ(r.out,
            "KeyStart,KeyEnd,ValueType,Value\n"
            "::,ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,string,all\n"
            "10.0.0.0,10.255.255.255,string,ten\n"
            "10.1.0.0,10.1.255.255,string,ten-one\n");
  r = env.Run({"query", "geo", "--where", "KeyStart in ('192.168.1.1', '2001:db8::')", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("192.168.1.1,192.168.1.1"));
  EXPECT_THAT(r.out, HasSubstr("2001:db8::,"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("ten")));
  // Nothing in the ipv4 map lies above ::ffff:255.255.255.255.
  r = env.Run({"query", "geo4", "--where", "KeyStart >= '2001:db8::'", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "KeyStart,KeyEnd,ValueType,Value\n");
}

TEST(IpKeysCli, RefusesMalformedAddressesInWhere) {
  CliEnv env(kConfig);
  LoadGeo(env);
  ProcessResult r = env.Run({"query", "geo", "--where", "KeyStart >= '10.0.0'"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'10.0.0' is not an IP address (KeyStart is an IP address"));
  r = env.Run({"query", "geo", "--where", "KeyStart >= 10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("write addresses quoted"));
  r = env.Run({"query", "geo", "--where", "KeyEnd startsWith '10.'"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("applies to text fields; KeyEnd is an IP address"));
}

TEST(IpKeysCli, RefusesAKeyFormatChangeOfAMapWithData) {
  CliEnv env(kConfig);
  LoadGeo(env);
  testing::WriteFile(env.config(), "[map.geo]\ntype = ranged\nkey_format = ipv4\n");
  ProcessResult r = env.Run({"lookup", "geo", "10.1.2.3"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("map geo, type ranged/3 (key_format=ip)"));
  EXPECT_THAT(r.err, HasSubstr("the config's [map.geo] says type = ranged, key_format = ipv4"));
  EXPECT_THAT(r.err, HasSubstr("the type's options changed (the file's key_format = ip, the config's key_format = "
                               "ipv4)"));
  // A home's shard: how to load the map again, or to undo the config change (issue 40).
  EXPECT_THAT(r.err, HasSubstr("To load the map again: stop what serves this home"));
  EXPECT_THAT(r.err, HasSubstr("mv " + env.home() + "/shards/geo /somewhere/geo.old"));
  EXPECT_THAT(r.err, HasSubstr("or set the config back to what wrote the shard"));
  testing::WriteFile(env.config(), "[map.geo]\ntype = ranged\nkey_format = ipv6\n");
  r = env.Run({"lookup", "geo", "10.1.2.3"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("key_format 'ipv6' is not one of number, ipv4, ip"));
}

TEST(IpKeysCli, DeleteWhereTakesAddresses) {
  CliEnv env(kConfig);
  LoadGeo(env);
  const std::string where = "KeyStart >= '10.0.0.0' and KeyEnd <= '10.255.255.255'";
  ProcessResult r = env.Run({"delete", "geo", "--where", where, "--dry-run", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "KeyStart,KeyEnd,ValueType,Value\n"
            "10.0.0.0,10.255.255.255,string,ten\n"
            "10.1.0.0,10.1.255.255,string,ten-one\n");
  r = env.Run({"delete", "geo", "--where", where});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 rows deleted"));
  r = env.Run({"lookup", "geo", "10.1.2.3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "all\n");  // the index was rebuilt: ::/0 answers now
  r = env.Run({"delete", "geo", "--where", "KeyStart >= 10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("write addresses quoted"));
}

TEST(IpKeysCli, RemoteLookupsAnswerAsTheNode) {
  ClusterFixture cluster(1);
  cluster.extra_map_sections = "[map.geo]\ntype = ranged\nkey_format = ip\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string file = cluster.dir() + "/geo.xml";
  testing::WriteFile(file, ReferenceData(KeyRef("geo", "10.0.0.0/8", "ten") + KeyRef("geo", "2001:db8::/32", "doc")));
  const ProcessResult load = cluster.Load({file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const auto remote = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/empty-home"});
    return testing::RunPlanb(args);
  };
  ProcessResult r = remote({"lookup", "--remote", "geo", "10.1.2.3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ten\n");
  r = remote({"lookup", "--remote", "geo", "10.1.2.3", "2001:db8::5", "8.8.8.8", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "key,value,found\n10.1.2.3,ten,true\n2001:db8::5,doc,true\n8.8.8.8,,false\n");
  r = remote({"lookup", "--remote", "geo", "10.1.2"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("'10.1.2' is not an IP address"));
}

}  // namespace
}  // namespace planb
