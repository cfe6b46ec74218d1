// The ranged store types under key_format = ipv4 and ip, loaded through the real registry, on real LMDB files:
// CIDR blocks and address ranges, the narrowest block winning, the ends of the address space, IPv4 beside
// IPv4-mapped IPv6, temporal versions, malformed addresses refused naming the text, key_format values refused,
// a shard never opened under another key_format, scans narrowed by address bounds, and heap-free lookups.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/ip_address.h"
#include "planb/plugin.h"
#include "support/heap_trap.h"
#include "support/map_fixture.h"
#include "support/ranged_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::PutRanges;
using ::planb::testing::RangeInput;
using ::planb::testing::RangeRecord;
using ::planb::testing::RunWithoutHeap;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

RangeInput Block(const std::string& cidr, const std::string& value, int64_t time_ms = 0) {
  RangeInput in;
  in.from = cidr;
  in.value = value;
  in.time_ms = time_ms;
  in.as_key = true;
  return in;
}

RangeInput Between(const std::string& from, const std::string& to, const std::string& value) {
  RangeInput in;
  in.from = from;
  in.to = to;
  in.value = value;
  return in;
}

std::string AddressText(const uint8_t* bytes) {
  ip::Address a;
  std::memcpy(a.bytes, bytes, 16);
  char text[ip::kMaxText];
  return std::string(text, ip::Format(a, text));
}

// (type, key_format)
using Param = std::pair<std::string, std::string>;

class IpKeyFormatTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Status s =
        CreateMapPlugins(MakeMapConfig("m", GetParam().first, "", {{"key_format", GetParam().second}}), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  bool temporal() const { return GetParam().first == "temporal_ranged"; }
  bool ip() const { return GetParam().second == "ip"; }

  std::shared_ptr<MapEnv> Shard(const std::vector<RangeInput>& inputs) {
    std::shared_ptr<MapEnv> batch;
    std::shared_ptr<MapEnv> shard;
    EXPECT_TRUE(CreateMapEnv(dir_ / ("b" + std::to_string(++envs_)), plugins_, &batch).ok());
    EXPECT_TRUE(CreateMapEnv(dir_ / ("s" + std::to_string(envs_)), plugins_, &shard).ok());
    const Status s = PutRanges(batch, inputs);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(MergeInto(batch, shard).ok());
    return shard;
  }

  // "value [from, to]" of the answer at `address` (at `time_ms`), "-" for a miss, "error: ..." otherwise.
  static std::string At(const std::shared_ptr<MapEnv>& env, const std::string& address, int64_t time_ms = 0) {
    MapReader reader;
    if (!reader.Open(env).ok()) return "error: open";
    LookupKey lookup;
    lookup.key = Bytes(address);
    lookup.time_ms = time_ms;
    Row row;
    ErrorBuffer error;
    const Code code = reader.Lookup(lookup, &row, &error);
    if (code == Code::kNotFound) return "-";
    if (code != Code::kOk) return std::string("error: ") + error.message;
    if (!row.has_addresses) return "error: no addresses in the row";
    return std::string(row.value.view()) + " [" + AddressText(row.address_from) + ", " +
           AddressText(row.address_to) + "]";
  }

  std::string PutError(const RangeInput& input) {
    std::shared_ptr<MapEnv> env;
    EXPECT_TRUE(CreateMapEnv(dir_ / ("r" + std::to_string(++envs_)), plugins_, &env).ok());
    MapTxn txn;
    EXPECT_TRUE(txn.Begin(env, true).ok());
    ErrorBuffer error;
    EXPECT_EQ(plugins_->store()->Put(txn.table(), RangeRecord(input), &error), Code::kInvalidArgument);
    return error.message;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  int envs_ = 0;
};

TEST_P(IpKeyFormatTest, NarrowestBlockWins) {
  // Loaded widest last: the answer does not depend on load order.
  auto shard = Shard({Block("10.1.2.0/24", "c"), Block("10.1.0.0/16", "b"), Block("10.0.0.0/8", "a"),
                      Block("10.1.2.3", "host"), Between("192.168.0.10", "192.168.0.20", "span")});
  EXPECT_EQ(At(shard, "10.1.2.3"), "host [10.1.2.3, 10.1.2.3]");
  EXPECT_EQ(At(shard, "10.1.2.4"), "c [10.1.2.0, 10.1.2.255]");
  EXPECT_EQ(At(shard, "10.1.3.0"), "b [10.1.0.0, 10.1.255.255]");
  EXPECT_EQ(At(shard, "10.255.255.255"), "a [10.0.0.0, 10.255.255.255]");
  EXPECT_EQ(At(shard, "11.0.0.0"), "-");
  EXPECT_EQ(At(shard, "9.255.255.255"), "-");
  EXPECT_EQ(At(shard, "192.168.0.10"), "span [192.168.0.10, 192.168.0.20]");
  EXPECT_EQ(At(shard, "192.168.0.21"), "-");
}

TEST_P(IpKeyFormatTest, EndsOfTheAddressSpace) {
  std::vector<RangeInput> inputs = {Block("0.0.0.0/0", "v4-all"), Block("255.255.255.255", "v4-last"),
                                    Block("0.0.0.0", "v4-first")};
  if (ip()) {
    inputs.push_back(Block("::/0", "all"));
    inputs.push_back(Block("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "last"));
  }
  auto shard = Shard(inputs);
  EXPECT_EQ(At(shard, "0.0.0.0"), "v4-first [0.0.0.0, 0.0.0.0]");
  EXPECT_EQ(At(shard, "0.0.0.1"), "v4-all [0.0.0.0, 255.255.255.255]");
  EXPECT_EQ(At(shard, "255.255.255.254"), "v4-all [0.0.0.0, 255.255.255.255]");
  EXPECT_EQ(At(shard, "255.255.255.255"), "v4-last [255.255.255.255, 255.255.255.255]");
  if (ip()) {
    EXPECT_EQ(At(shard, "::"), "all [::, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
    EXPECT_EQ(At(shard, "::1"), "all [::, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
    EXPECT_EQ(At(shard, "2001:db8::1"), "all [::, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
    EXPECT_EQ(At(shard, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"),
              "all [::, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
    EXPECT_EQ(At(shard, "FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF"),
              "last [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
  }
}

TEST_P(IpKeyFormatTest, Ipv4AndMappedIpv6AreOneAddressInIp) {
  if (!ip()) {
    // ipv4 takes IPv4 only, and decimal addresses as the tor-geoip IPv4 file writes them.
    EXPECT_TRUE(Contains(PutError(Block("2001:db8::/32", "x")), "'2001:db8::/32' is not an IPv4 address"));
    auto shard = Shard({Between("16777216", "16777471", "decimal")});
    EXPECT_EQ(At(shard, "1.0.0.5"), "decimal [1.0.0.0, 1.0.0.255]");
    EXPECT_EQ(At(shard, "16777217"), "decimal [1.0.0.0, 1.0.0.255]");
    EXPECT_TRUE(Contains(At(shard, "::ffff:1.0.0.5"), "not an IPv4 address")) << At(shard, "::ffff:1.0.0.5");
    return;
  }
  auto shard = Shard({Block("1.2.3.0/24", "v4"), Block("::ffff:1.2.3.4/128", "mapped"),
                      Block("2001:db8::/32", "v6"), Block("2001:db8:1::/48", "v6-narrow")});
  EXPECT_EQ(At(shard, "1.2.3.4"), "mapped [1.2.3.4, 1.2.3.4]");
  EXPECT_EQ(At(shard, "::ffff:1.2.3.5"), "v4 [1.2.3.0, 1.2.3.255]");
  EXPECT_EQ(At(shard, "::1.2.3.5"), "-");  // IPv4-compatible (deprecated) is another address
  EXPECT_EQ(At(shard, "2001:db8:1:2::"), "v6-narrow [2001:db8:1::, 2001:db8:1:ffff:ffff:ffff:ffff:ffff]");
  EXPECT_EQ(At(shard, "2001:db8:2::"), "v6 [2001:db8::, 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]");
  // A decimal is the IPv4 address it numbers, as in ipv4 maps: 16909060 is 1.2.3.4 (::ffff:1.2.3.4).
  EXPECT_EQ(At(shard, "16909060"), "mapped [1.2.3.4, 1.2.3.4]");
  // And the Tor file's decimal ranges load into an ip map as they come (they were refused as "not an IP address").
  auto decimal = Shard({Between("16777216", "16777471", "decimal"), Block("2001:db8::/32", "v6")});
  EXPECT_EQ(At(decimal, "1.0.0.5"), "decimal [1.0.0.0, 1.0.0.255]");
  EXPECT_EQ(At(decimal, "::ffff:1.0.0.255"), "decimal [1.0.0.0, 1.0.0.255]");
  EXPECT_EQ(At(decimal, "1.0.1.0"), "-");
  EXPECT_EQ(At(decimal, "2001:db8::5"), "v6 [2001:db8::, 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]");
}

TEST_P(IpKeyFormatTest, RefusesMalformedAddressesNamingThem) {
  for (const char* bad : {"1.2.3", "256.1.1.1", ":::", "", "10.0.0.0x", "abc"}) {
    EXPECT_TRUE(Contains(PutError(Block(bad, "x")), std::string("<key> '") + bad + "' is not an IP address"))
        << bad << ": " << PutError(Block(bad, "x"));
  }
  EXPECT_TRUE(Contains(PutError(Block("1.2.3.4/33", "x")), "'1.2.3.4/33' has a prefix length over 32"));
  EXPECT_TRUE(Contains(PutError(Block("10.0.0.0/8x", "x")), "'10.0.0.0/8x' has no valid prefix length after '/'"));
  EXPECT_TRUE(Contains(PutError(Block("10.0.0.1/8", "x")), "'10.0.0.1/8' has host bits set"));
  if (ip()) {
    EXPECT_TRUE(Contains(PutError(Block("2001:db8::/129", "x")), "'2001:db8::/129' has a prefix length over 128"));
  }
  EXPECT_TRUE(Contains(PutError(Between("10.0.0.0/8", "10.0.0.9", "x")), "<from> '10.0.0.0/8' is a CIDR block"));
  EXPECT_TRUE(Contains(PutError(Between("10.0.0.9", "10.0.0.1", "x")),
                       "<from> 10.0.0.9 is greater than <to> 10.0.0.1"));
  EXPECT_TRUE(Contains(PutError(Between("10.0.0.1", "10.0.0.300", "x")), "<to> '10.0.0.300' is not an IP address"));

  auto shard = Shard({Block("10.0.0.0/8", "a")});
  for (const char* bad : {"10.1", "10.0.0.0/8", " 10.0.0.1x", "::g"}) {
    EXPECT_TRUE(Contains(At(shard, bad), std::string("lookup key '") + bad + "'")) << bad << ": " << At(shard, bad);
  }
  // Blanks around an address: refused, not trimmed (a load's XML <key> text is trimmed; a lookup key is exact).
  for (const char* blank : {" 10.0.0.1", "10.0.0.1 ", "\t10.0.0.1", "10.0.0.1\n"}) {
    EXPECT_TRUE(Contains(At(shard, blank), "has blanks around it: addresses are matched as given"))
        << blank << ": " << At(shard, blank);
  }
  EXPECT_EQ(At(shard, "10.0.0.1"), "a [10.0.0.0, 10.255.255.255]");
}

class TemporalIpKeyFormatTest : public IpKeyFormatTest {};

TEST_P(TemporalIpKeyFormatTest, VersionsOfBlocks) {
  auto shard = Shard({Block("10.0.0.0/8", "old-wide", 100), Block("10.1.0.0/16", "narrow", 200),
                      Block("10.0.0.0/8", "new-wide", 300)});
  EXPECT_EQ(At(shard, "10.1.0.1", 50), "-");
  EXPECT_EQ(At(shard, "10.1.0.1", 150), "old-wide [10.0.0.0, 10.255.255.255]");
  EXPECT_EQ(At(shard, "10.1.0.1", 250), "narrow [10.1.0.0, 10.1.255.255]");
  EXPECT_EQ(At(shard, "10.1.0.1", 350), "new-wide [10.0.0.0, 10.255.255.255]");
  EXPECT_EQ(At(shard, "10.2.0.1", 250), "old-wide [10.0.0.0, 10.255.255.255]");
}

TEST_P(IpKeyFormatTest, ScanBoundsNarrowToAddresses) {
  auto shard = Shard({Block("10.0.0.0/8", "a")});
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(shard, false).ok());
  ScanBounds bounds;
  bounds.has_address_bounds = true;
  const ip::Address low = ip::MapIpv4(0x0a000000);
  const ip::Address high = ip::MapIpv4(0x0b000000);
  std::memcpy(bounds.address_min, low.bytes, 16);
  std::memcpy(bounds.address_max, high.bytes, 16);
  KeyRange range;
  ErrorBuffer error;
  ASSERT_EQ(plugins_->store()->ScanRange(txn.table(), bounds, &range, &error), Code::kOk);
  ASSERT_TRUE(range.has_lower && range.has_upper);
  const uint32_t width = ip() ? 16 : 8;
  const uint32_t key_size = 2 * width + (temporal() ? 8 : 0);
  EXPECT_EQ(range.lower.size, key_size);
  EXPECT_EQ(range.upper.size, key_size);
  if (ip()) {
    EXPECT_EQ(std::memcmp(range.lower.bytes, low.bytes, 16), 0);
    EXPECT_EQ(std::memcmp(range.upper.bytes, high.bytes, 16), 0);
  } else {
    EXPECT_EQ(GetOrderedI64(range.lower.bytes), 0x0a000000);
    EXPECT_EQ(GetOrderedI64(range.upper.bytes), 0x0b000000);
  }
  // An ipv4 map holds nothing above ::ffff:255.255.255.255.
  const ip::Address v6 = ip::Address{{0x20, 0x01, 0x0d, 0xb8}};
  std::memcpy(bounds.address_min, v6.bytes, 16);
  std::memset(bounds.address_max, 0xff, 16);
  EXPECT_EQ(plugins_->store()->ScanRange(txn.table(), bounds, &range, &error), ip() ? Code::kOk : Code::kNotFound);
}

TEST_P(IpKeyFormatTest, LookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  std::vector<RangeInput> inputs;
  for (int i = 0; i < 200; ++i) inputs.push_back(Block("10." + std::to_string(i) + ".0.0/16", std::to_string(i)));
  inputs.push_back(Block("10.0.0.0/8", "wide"));
  auto shard = Shard(inputs);
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  const std::vector<std::string> keys = {"10.5.1.1", "10.250.0.1", "11.0.0.0", "10.199.255.255"};
  const auto result = RunWithoutHeap([&] {
    LookupKey lookup;
    Row row;
    ErrorBuffer error;
    for (int round = 0; round < 3; ++round) {
      for (const std::string& key : keys) {
        lookup.key = Bytes(key);
        const Code code = reader.Lookup(lookup, &row, &error);
        if (code != (key == "11.0.0.0" ? Code::kNotFound : Code::kOk)) return 2;
      }
    }
    return 0;
  });
  ASSERT_TRUE(result.forked);
  ASSERT_TRUE(result.armed);
  EXPECT_EQ(result.signal, 0) << "a lookup allocated (operator new threw)";
  EXPECT_EQ(result.exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Types, IpKeyFormatTest,
                         ::testing::Values(Param{"ranged", "ip"}, Param{"ranged", "ipv4"},
                                           Param{"temporal_ranged", "ip"}, Param{"temporal_ranged", "ipv4"}),
                         [](const auto& info) { return info.param.first + "_" + info.param.second; });

INSTANTIATE_TEST_SUITE_P(Types, TemporalIpKeyFormatTest,
                         ::testing::Values(Param{"temporal_ranged", "ip"}, Param{"temporal_ranged", "ipv4"}),
                         [](const auto& info) { return info.param.first + "_" + info.param.second; });

TEST(IpKeyFormat, RefusesAnUnknownKeyFormat) {
  for (const char* type : {"ranged", "temporal_ranged"}) {
    std::shared_ptr<const MapPlugins> plugins;
    const Status s = CreateMapPlugins(MakeMapConfig("geo", type, "", {{"key_format", "ipv6"}}), &plugins);
    ASSERT_FALSE(s.ok()) << type;
    EXPECT_TRUE(Contains(s.message(), "map 'geo': key_format 'ipv6' is not one of number, ipv4, ip")) << s.message();
  }
  // Other types do not declare it.
  std::shared_ptr<const MapPlugins> plugins;
  EXPECT_FALSE(CreateMapPlugins(MakeMapConfig("geo", "state", "hashed", {{"key_format", "ip"}}), &plugins).ok());
}

TEST(IpKeyFormat, AShardIsNeverOpenedUnderAnotherKeyFormat) {
  TempDir dir;
  const std::vector<std::string> formats = {"number", "ipv4", "ip"};
  for (const std::string& written : formats) {
    std::shared_ptr<const MapPlugins> plugins;
    ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("geo", "ranged", "", {{"key_format", written}}), &plugins).ok());
    std::shared_ptr<MapEnv> env;
    ASSERT_TRUE(CreateMapEnv(dir / written, plugins, &env).ok());
    env.reset();
    for (const std::string& config : formats) {
      std::shared_ptr<const MapPlugins> reopened;
      ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("geo", "ranged", "", {{"key_format", config}}), &reopened).ok());
      const Status s = MapEnv::Open(dir / written, reopened, MapEnv::Mode::kOpenExisting, 0, &env);
      if (config == written) {
        EXPECT_TRUE(s.ok()) << written << ": " << s.message();
      } else {
        ASSERT_FALSE(s.ok()) << written << " as " << config;
        EXPECT_TRUE(Contains(s.message(), "written as map geo, type ranged/3 (key_format=" + written + ")"))
            << s.message();
        EXPECT_TRUE(Contains(s.message(), "the config's [map.geo] says type = ranged, key_format = " + config +
                                              " (this planb writes map geo, type ranged/3 (key_format=" + config +
                                              ")): the type's options changed (the file's key_format = " + written +
                                              ", the config's key_format = " + config + ")"))
            << s.message();
      }
      env.reset();
    }
  }
}

TEST(IpKeyFormat, ShardsWithoutARecordedLayoutAreNumberShards) {
  // A shard written before the layout was recorded has no type_layout in its meta: it opens as number only.
  TempDir dir;
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("geo", "ranged", ""), &plugins).ok());
  std::shared_ptr<MapEnv> env;
  ASSERT_TRUE(CreateMapEnv(dir / "old", plugins, &env).ok());
  {
    Txn txn;
    ASSERT_TRUE(txn.Begin(env->env(), 0).ok());
    MDB_dbi meta = 0;
    ASSERT_TRUE(txn.OpenDbi("meta", 0, &meta).ok());
    MDB_val k{std::strlen("type_layout"), const_cast<char*>("type_layout")};
    ASSERT_EQ(mdb_del(txn.get(), meta, &k, nullptr), MDB_SUCCESS);  // as old shards are
    ASSERT_TRUE(txn.Commit().ok());
  }
  env.reset();
  EXPECT_TRUE(MapEnv::Open(dir / "old", plugins, MapEnv::Mode::kOpenExisting, 0, &env).ok());
  env.reset();
  std::shared_ptr<const MapPlugins> ip;
  ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("geo", "ranged", "", {{"key_format", "ip"}}), &ip).ok());
  const Status s = MapEnv::Open(dir / "old", ip, MapEnv::Mode::kOpenExisting, 0, &env);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "(key_format=number)")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "(key_format=ip)")) << s.message();
}

// --- The whole path: XML -> batch -> staging -> merge -> MapReader ---

TEST(IpKeyFormatLoad, LoadsBlocksAndRefusesAMalformedAddressWithItsLine) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), "[map.geo]\ntype = ranged\nkey_format = ip\nmax_store_size = 1GiB\n",
                             &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  WriteFile(dir / "a.xml",
            "<referenceData xmlns=\"reference-data:2\">\n"
            "<reference><map>geo</map><key>10.0.0.0/8</key><value>ten</value></reference>\n"
            "<reference><map>geo</map><from>2001:db8::</from><to>2001:db8::ff</to><value>doc</value></reference>\n"
            "</referenceData>\n");
  LoadOptions options;
  options.effective_time_ms = 1700000000000;
  LoadReport report;
  s = RunLoad(*runtime, {dir / "a.xml"}, options, &report);
  ASSERT_TRUE(s.ok()) << s.message();

  WriteFile(dir / "bad.xml",
            "<referenceData xmlns=\"reference-data:2\">\n"
            "<reference><map>geo</map><key>11.0.0.0/8</key><value>fine</value></reference>\n"
            "<reference><map>geo</map><key>12.0.0.300</key><value>bad</value></reference>\n"
            "</referenceData>\n");
  s = RunLoad(*runtime, {dir / "bad.xml"}, options, &report);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "bad.xml:3")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'12.0.0.300' is not an IP address")) << s.message();

  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("geo", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  const std::pair<const char*, const char*> expected[] = {
      {"10.9.9.9", "ten"}, {"2001:db8::80", "doc"}, {"11.0.0.1", nullptr}, {"2001:db8::100", nullptr}};
  for (const auto& [address, value] : expected) {
    LookupKey lookup;
    lookup.key = Bytes(std::string_view(address));
    Row row;
    ErrorBuffer error;
    const Code code = reader.Lookup(lookup, &row, &error);
    if (value == nullptr) {
      EXPECT_EQ(code, Code::kNotFound) << address << " (the failed load left nothing)";
    } else {
      ASSERT_EQ(code, Code::kOk) << address << ": " << error.message;
      EXPECT_EQ(row.value.view(), value);
    }
  }
}

}  // namespace
}  // namespace planb
