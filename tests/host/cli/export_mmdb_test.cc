// `planb export MAP --format mmdb OUT` (issue 41): a ranged map with IP address keys as a MaxMind DB file. For
// every range boundary (and the addresses either side) and a random sample of addresses, libmaxminddb's C API on
// the exported file answers what `planb lookup` answers, for nested and overlapping ranges, JSON and text values,
// ipv4 and ip maps (IPv4 under ::/96 and again under ::ffff:0:0/96); mmdblookup reads it too, and a file imported
// from an .mmdb exports with its own types. Bad input (a map of the wrong kind, an unwritable OUT, a value the
// format cannot hold, unknown options) is refused naming it, leaving OUT as it was and no temporary file.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <maxminddb.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/cli_test_env.h"
#include "host/ingest/mmdb_json.h"
#include "support/mmdb_fixture.h"

namespace planb {
namespace {

using json = nlohmann::json;
using testing::CliEnv;
using testing::ProcessResult;
using ::testing::HasSubstr;

constexpr char kConfig[] =
    "[map.geo]\ntype = ranged\nkey_format = ip\n"
    "[map.geo4]\ntype = ranged\nkey_format = ipv4\n"
    "[map.hist]\ntype = temporal_ranged\nkey_format = ipv4\n"
    "[map.ok4]\ntype = ranged\nkey_format = ipv4\n"
    "[map.empty4]\ntype = ranged\nkey_format = ipv4\n"
    "[map.cities]\ntype = state\n"
    "[map.numbers]\ntype = ranged\n";

std::string Ipv4Text(uint32_t v) {
  const uint32_t n = htonl(v);
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &n, text, sizeof text);
  return text;
}

// An exported file opened with libmaxminddb's C API.
class MmdbReader {
 public:
  explicit MmdbReader(const std::string& path) { open_ = MMDB_open(path.c_str(), MMDB_MODE_MMAP, &mmdb_) == MMDB_SUCCESS; }
  ~MmdbReader() {
    if (open_) MMDB_close(&mmdb_);
  }
  bool open() const { return open_; }
  const MMDB_s& mmdb() const { return mmdb_; }

  // The record for `address` as JSON (null: no entry); a string "error: ..." when the lookup fails.
  json Lookup(const std::string& address) {
    int gai_error = 0, mmdb_error = 0;
    MMDB_lookup_result_s result = MMDB_lookup_string(&mmdb_, address.c_str(), &gai_error, &mmdb_error);
    if (gai_error != 0 || mmdb_error != MMDB_SUCCESS) return "error: " + address;
    if (!result.found_entry) return nullptr;
    MMDB_entry_data_list_s* list = nullptr;
    if (MMDB_get_entry_data_list(&result.entry, &list) != MMDB_SUCCESS) return "error: data of " + address;
    const MMDB_entry_data_list_s* at = list;
    std::string text;
    const Status s = AppendMmdbJson(&at, MmdbJsonLimits(), &text);
    MMDB_free_entry_data_list(list);
    if (!s.ok()) return "error: " + s.message();
    return json::parse(text);
  }

  // The data type of the member `name` of the record for `address` (-1 when absent).
  int TypeOf(const std::string& address, const char* name) {
    int gai_error = 0, mmdb_error = 0;
    MMDB_lookup_result_s result = MMDB_lookup_string(&mmdb_, address.c_str(), &gai_error, &mmdb_error);
    if (!result.found_entry) return -1;
    MMDB_entry_data_s data;
    if (MMDB_get_value(&result.entry, &data, name, nullptr) != MMDB_SUCCESS || !data.has_data) return -1;
    return static_cast<int>(data.type);
  }

 private:
  MMDB_s mmdb_{};
  bool open_ = false;
};

class ExportMmdb : public ::testing::Test {
 protected:
  // What `planb lookup MAP` answers for each address: its value as JSON (text values as strings), null for a miss.
  std::vector<json> PlanbAnswers(const std::string& map, const std::vector<std::string>& addresses) {
    std::string keys;
    for (const std::string& a : addresses) keys += a + "\n";
    const std::string file = env_.Write(map + "-keys.txt", keys);
    const ProcessResult r = env_.Run({"lookup", map, "--keys-from", file, "--format", "json", "--quiet"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const json all = json::parse(r.out);
    std::vector<json> answers;
    for (const json& one : all) answers.push_back(one["found"].get<bool>() ? one["value"] : json(nullptr));
    return answers;
  }

  // Exports `map` to a file; returns its path.
  std::string Export(const std::string& map, std::vector<std::string> extra = {}) {
    const std::string out = env_.dir() + "/" + map + ".mmdb";
    std::vector<std::string> args{"export", map, out, "--format", "mmdb"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = env_.Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("exported map " + map));
    return out;
  }

  void ExpectSameAnswers(const std::string& map, const std::string& file, const std::vector<std::string>& addresses) {
    MmdbReader reader(file);
    ASSERT_TRUE(reader.open()) << file;
    const std::vector<json> planb = PlanbAnswers(map, addresses);
    ASSERT_EQ(planb.size(), addresses.size());
    size_t found = 0;
    for (size_t i = 0; i < addresses.size(); ++i) {
      EXPECT_EQ(reader.Lookup(addresses[i]), planb[i]) << map << " " << addresses[i];
      found += planb[i].is_null() ? 0 : 1;
    }
    EXPECT_GT(found, addresses.size() / 4) << "the sample should mostly hit";
    EXPECT_LT(found, addresses.size()) << "and miss somewhere";
  }

  // No temporary file of an export is left in the directory.
  void ExpectNoTemporaryFiles() const {
    for (const auto& entry : std::filesystem::directory_iterator(env_.dir())) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
    }
  }

  CliEnv env_{kConfig};
};

// Random nested and overlapping IPv4 ranges in 10.0.0.0/16 with JSON and text values: their lines for
// `load --format jsonl --from from --to to --value value`, and every boundary's neighbours.
struct RandomRanges {
  std::string jsonl;
  std::set<uint32_t> probes;
};

RandomRanges MakeRandomRanges(std::mt19937* random, uint32_t base, int count) {
  const std::vector<json> values = {
      json{{"country", {{"iso_code", "GB"}, {"names", {"UK", "Britain"}}}}, {"pop", 70000}, {"lat", 51.5}},
      json{{"country", {{"iso_code", "FR"}}}, {"eu", true}, {"neg", -7}, {"tiny", 3}},
      json{{"asn", 4294967295u}, {"big", 18446744073709551615u}, {"ratio", 0.125}},
      json("a plain JSON string"),
      json{{"nested", {{"deeper", {{"deepest", {1, 2.5, false, "x"}}}}}}},
  };
  const std::vector<std::string> texts = {"text one", "zwei \xC3\xBC", "three, with \"quotes\""};
  RandomRanges out;
  std::uniform_int_distribution<uint32_t> start(0, 65535);
  std::uniform_int_distribution<int> shape(0, 5);
  for (int i = 0; i < count; ++i) {
    const uint32_t from = base + start(*random);
    const int s = shape(*random);
    const uint32_t length = s == 0 ? 1 : s == 1 ? 16 : s == 2 ? 256 : s == 3 ? 4096 : 1 + (*random)() % 3000;
    const uint32_t to = std::min<uint32_t>(from + length - 1, base + 65535);
    json line = {{"from", Ipv4Text(from)}, {"to", Ipv4Text(to)}};
    if (i % 3 == 0) {
      line["value"] = texts[(*random)() % texts.size()];
    } else {
      const json& v = values[(*random)() % values.size()];
      line["value"] = v.is_string() ? json(v.dump()) : v;  // a string value is text; keep one as JSON via --value
    }
    out.jsonl += line.dump() + "\n";
    for (uint32_t p : {from - 1, from, from + 1, to - 1, to, to + 1}) out.probes.insert(p);
  }
  std::uniform_int_distribution<uint32_t> anywhere(base - 256, base + 65535 + 256);
  for (int i = 0; i < 1000; ++i) out.probes.insert(anywhere(*random));
  return out;
}

TEST_F(ExportMmdb, EveryBoundaryAndASampleAnswerAsPlanbLookupDoesInAnIpv4Map) {
  std::mt19937 random(41);
  const uint32_t base = 10u << 24;
  const RandomRanges ranges = MakeRandomRanges(&random, base, 300);
  const std::string input = env_.Write("ranges.jsonl", ranges.jsonl);
  const ProcessResult load =
      env_.Run({"load", "--format", "jsonl", "--map", "geo4", "--from", "from", "--to", "to", "--value", "value", input});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const std::string file = Export("geo4");
  MmdbReader reader(file);
  ASSERT_TRUE(reader.open());
  EXPECT_EQ(reader.mmdb().metadata.ip_version, 4);
  EXPECT_EQ(std::string(reader.mmdb().metadata.database_type), "PlanB-geo4");
  std::vector<std::string> addresses;
  for (uint32_t p : ranges.probes) addresses.push_back(Ipv4Text(p));
  ExpectSameAnswers("geo4", file, addresses);
  ExpectNoTemporaryFiles();
}

TEST_F(ExportMmdb, AnIpMapKeepsIpv4UnderBothPrefixesAndIpv6BesideIt) {
  std::mt19937 random(42);
  const RandomRanges ranges = MakeRandomRanges(&random, 10u << 24, 150);
  std::string jsonl = ranges.jsonl;
  // IPv6 ranges nested in 2001:db8::/32, and a default for every address.
  jsonl += R"({"from":"2001:db8::","to":"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff","value":{"net":"doc"}})" "\n";
  jsonl += R"({"from":"2001:db8:1::","to":"2001:db8:1::ff","value":{"net":"inner","n":1}})" "\n";
  jsonl += R"({"from":"2001:db8:1::80","to":"2001:db8:2::","value":"overlapping text"})" "\n";
  jsonl += R"({"from":"::","to":"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff","value":"default"})" "\n";
  const std::string input = env_.Write("ranges6.jsonl", jsonl);
  const ProcessResult load =
      env_.Run({"load", "--format", "jsonl", "--map", "geo", "--from", "from", "--to", "to", "--value", "value", input});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const std::string file = Export("geo");
  std::vector<std::string> addresses;
  for (uint32_t p : ranges.probes) {
    addresses.push_back(Ipv4Text(p));
    if (p % 7 == 0) addresses.push_back("::ffff:" + Ipv4Text(p));  // the mapped form: the aliased subtree
  }
  for (const char* a : {"2001:db8::", "2001:db8::1", "2001:db8:1::", "2001:db8:1::7f", "2001:db8:1::80",
                        "2001:db8:1::ff", "2001:db8:1::100", "2001:db8:2::", "2001:db8:2::1", "2001:db7:ffff::",
                        "2001:db9::", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "8.8.8.8", "0.0.0.0",
                        "255.255.255.255", "::ffff:255.255.255.255"}) {
    addresses.push_back(a);
  }
  // Everything answers (the default); ExpectSameAnswers wants some misses, so check the hits by hand.
  MmdbReader reader(file);
  ASSERT_TRUE(reader.open());
  EXPECT_EQ(reader.mmdb().metadata.ip_version, 6);
  const std::vector<json> planb = PlanbAnswers("geo", addresses);
  ASSERT_EQ(planb.size(), addresses.size());
  std::set<std::string> distinct;
  for (size_t i = 0; i < addresses.size(); ++i) {
    EXPECT_EQ(reader.Lookup(addresses[i]), planb[i]) << addresses[i];
    distinct.insert(planb[i].dump());
  }
  EXPECT_GT(distinct.size(), 5u) << "the sample meets many of the values";
}

TEST_F(ExportMmdb, MmdblookupReadsTheFileAndAnImportedFileKeepsItsTypes) {
  const json types = {{"country", "map"}, {"iso_code", "utf8_string"}, {"names", json::array({"array", "utf8_string"})},
                      {"lat", "double"},  {"pop", "uint32"},           {"eu", "boolean"},
                      {"city", "utf8_string"}, {"big", "uint128"},     {"asn", "uint64"}};
  const auto network = [](const std::string& n, const json& record) { return json{{"network", n}, {"record", record}}; };
  const json description = {
      {"ip_version", 6},
      {"record_size", 28},
      {"alias_ipv6_to_ipv4", true},
      {"database_type", "Test-City"},
      {"types", types},
      {"networks",
       {network("81.0.0.0/8", {{"country", {{"iso_code", "GB"}, {"names", {"UK", "Britain"}}}}, {"eu", false}}),
        network("81.2.69.0/24", {{"city", "London"}, {"lat", 51.5142}, {"pop", 8900000}, {"asn", 5000000000u}}),
        network("2001:db8::/32", {{"country", {{"iso_code", "DE"}}}, {"eu", true},
                                  {"big", "340282366920938463463374607431768211455"}}),
        network("2001:db8:1::/48", {{"city", "Berlin \"Mitte\""}, {"lat", -0.5}})}}};
  const std::string original = env_.Write("city.mmdb", "");
  ASSERT_EQ(testing::MakeMmdb(original, description), "");
  const ProcessResult load = env_.Run({"load", "--format", "mmdb", "--map", "geo", original});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const std::string exported = Export("geo", {"--database-type", "GeoLite2-City"});
  for (const char* address : {"81.0.0.1", "81.2.69.160", "::ffff:81.2.69.160", "81.3.0.0", "2001:db8::1",
                              "2001:db8:1::1", "2001:db8:2::", "80.0.0.1", "2001:db9::"}) {
    EXPECT_EQ(testing::MmdblookupLines(exported, address), testing::MmdblookupLines(original, address)) << address;
  }
  MmdbReader reader(exported);
  ASSERT_TRUE(reader.open());
  EXPECT_EQ(std::string(reader.mmdb().metadata.database_type), "GeoLite2-City");
  EXPECT_EQ(reader.TypeOf("81.2.69.160", "pop"), MMDB_DATA_TYPE_UINT32);
  EXPECT_EQ(reader.TypeOf("81.2.69.160", "asn"), MMDB_DATA_TYPE_UINT64);
  EXPECT_EQ(reader.TypeOf("81.2.69.160", "lat"), MMDB_DATA_TYPE_DOUBLE);
  EXPECT_EQ(reader.TypeOf("2001:db8::1", "eu"), MMDB_DATA_TYPE_BOOLEAN);
  EXPECT_EQ(reader.TypeOf("2001:db8::1", "big"), MMDB_DATA_TYPE_UINT128);
  EXPECT_EQ(reader.TypeOf("81.0.0.1", "country"), MMDB_DATA_TYPE_MAP);
}

TEST_F(ExportMmdb, ATemporalRangedMapExportsItsAnswersAtTheTimeAsked) {
  const std::string input = env_.Write(
      "hist.jsonl",
      R"({"from":"10.0.0.0","to":"10.0.0.255","time":"2024-01-01T00:00:00Z","value":"old"})" "\n"
      R"({"from":"10.0.0.0","to":"10.0.0.255","time":"2025-01-01T00:00:00Z","value":"new"})" "\n");
  const ProcessResult load = env_.Run({"load", "--format", "jsonl", "--map", "hist", "--from", "from", "--to", "to",
                                       "--time", "time", "--value", "value", input});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const std::string file = Export("hist", {"--time", "2024-06-01T00:00:00Z"});
  EXPECT_EQ(MmdbReader(file).Lookup("10.0.0.7"), "old");
  const std::string now = Export("hist");
  EXPECT_EQ(MmdbReader(now).Lookup("10.0.0.7"), "new");
  const ProcessResult refused = env_.Run({"export", "geo4", env_.dir() + "/x.mmdb", "--format", "mmdb", "--time",
                                          "2024-06-01T00:00:00Z"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("--time does not apply to map geo4"));
}

TEST_F(ExportMmdb, ReplacesAnOldFileInOneStep) {
  const std::string input = env_.Write("a.jsonl", R"({"from":"10.0.0.0","to":"10.0.0.255","value":"a"})" "\n");
  ASSERT_EQ(env_.Run({"load", "--format", "jsonl", "--map", "geo4", "--from", "from", "--to", "to", "--value",
                      "value", input}).exit_code, 0);
  const std::string out = env_.Write("geo4.mmdb", "the old file\n");
  // A reader holding the old file keeps reading it whole: the new one is another file renamed over the name.
  FILE* held = std::fopen(out.c_str(), "r");
  ASSERT_NE(held, nullptr);
  Export("geo4");
  char buffer[64] = {};
  EXPECT_EQ(std::fread(buffer, 1, sizeof buffer - 1, held), 13u);
  EXPECT_EQ(std::string(buffer), "the old file\n");
  std::fclose(held);
  EXPECT_EQ(MmdbReader(out).Lookup("10.0.0.1"), "a");
  struct stat st{};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u & ~static_cast<unsigned>(::umask(022)));
  ExpectNoTemporaryFiles();
}

TEST_F(ExportMmdb, BadInputIsRefusedNamingItAndOutIsLeftAsItWas) {
  const std::string input = env_.Write(
      "bad.jsonl", R"({"from":"10.0.0.0","to":"10.0.0.255","value":{"ok":1}})" "\n"
                   R"({"from":"10.0.1.0","to":"10.0.1.255","value":{"where":{"gone":null}}})" "\n");
  ASSERT_EQ(env_.Run({"load", "--format", "jsonl", "--map", "geo4", "--from", "from", "--to", "to", "--value",
                      "value", input}).exit_code, 0);
  const std::string compatible = env_.Write("compatible.jsonl", R"({"from":"::1","to":"::1","value":"loopback"})" "\n"
                                                                R"({"from":"1.2.3.4","to":"1.2.3.4","value":"v4"})" "\n");
  ASSERT_EQ(env_.Run({"load", "--format", "jsonl", "--map", "geo", "--from", "from", "--to", "to", "--value",
                      "value", compatible}).exit_code, 0);
  const std::string negative = env_.Write(
      "negative.jsonl", R"({"from":"10.0.0.0","to":"10.0.0.9","time":"2024-01-01T00:00:00Z","value":{"n":-3000000000}})" "\n");
  ASSERT_EQ(env_.Run({"load", "--format", "jsonl", "--map", "hist", "--from", "from", "--to", "to", "--time", "time",
                      "--value", "value", negative}).exit_code, 0);
  ASSERT_EQ(env_.Run({"load", "--format", "jsonl", "--map", "ok4", "--from", "from", "--to", "to", "--value",
                      "value", env_.Write("ok.jsonl", R"({"from":"1.0.0.0","to":"1.0.0.9","value":1})" "\n")}).exit_code, 0);
  const std::string out = env_.Write("out.mmdb", "keep me\n");
  const auto expect_refused = [&](std::vector<std::string> args, const std::string& message) {
    const ProcessResult r = env_.Run(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_EQ(testing::ReadFile(out), "keep me\n");
    ExpectNoTemporaryFiles();
  };
  expect_refused({"export", "geo4", out, "--format", "mmdb"},
                 "map geo4: the answer for 10.0.1.0-10.0.1.255 cannot be written to a MaxMind DB: member where.gone "
                 "is null");
  expect_refused({"export", "geo", out, "--format", "mmdb"},
                 "map geo: its range ::1-::1 lies inside ::/96, where a MaxMind DB keeps IPv4 addresses");
  expect_refused({"export", "hist", out, "--format", "mmdb"},
                 "map hist: the answer for 10.0.0.0-10.0.0.9 cannot be written to a MaxMind DB: member n is the "
                 "integer -3000000000, below -2147483648");
  expect_refused({"export", "cities", out, "--format", "mmdb"},
                 "map cities (type state) is not keyed by IP addresses");
  expect_refused({"export", "numbers", out, "--format", "mmdb"},
                 "map numbers (type ranged) is not keyed by IP addresses");
  expect_refused({"export", "nowhere", out, "--format", "mmdb"}, "nowhere");
  expect_refused({"export", "empty4", out, "--format", "mmdb"}, "map empty4 has no data on this node");
  expect_refused({"export", "geo4", out}, "export: give --format mmdb");
  expect_refused({"export", "geo4", out, "--format", "csv"}, "unknown --format 'csv'; expected mmdb");
  expect_refused({"export", "geo4", out, "--format", "mmdb", "--database-type", ""}, "--database-type ''");
  expect_refused({"export", "geo4", out, "--format", "mmdb", "--database-type", "a\nb"}, "--database-type 'a\\nb'");
  expect_refused({"export", "geo4", "--format", "mmdb"}, "export");
  expect_refused({"export", "ok4", env_.dir() + "/no/such/dir/x.mmdb", "--format", "mmdb"},
                 "cannot create a temporary file beside " + env_.dir() + "/no/such/dir/x.mmdb");
  expect_refused({"export", "ok4", env_.dir(), "--format", "mmdb"}, "is a directory");
  expect_refused({"export", "ok4", env_.dir() + "/", "--format", "mmdb"}, "is a directory");
}

}  // namespace
}  // namespace planb
