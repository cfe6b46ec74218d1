#include "host/ingest/mmdb_networks.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <maxminddb.h>

#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/mmdb_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::MakeMmdb;
using testing::MmdblookupLines;
using testing::MmdblookupLinesFor;
using testing::ReadFile;
using ::testing::StartsWith;
using testing::TempDir;
using testing::WriteFile;

// A network as the test states it: its text, first and last address, prefix length.
struct Net {
  std::string first;
  std::string last;
  int prefix_len;
  std::string record_json;
};

std::string AddressText(bool ipv6, const std::array<uint8_t, 16>& bytes) {
  char text[INET6_ADDRSTRLEN];
  inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes.data(), text, sizeof text);
  return text;
}

Status ReadAll(const std::string& path, MmdbLimits limits, std::vector<MmdbNetwork>* out) {
  std::unique_ptr<MmdbFile> file;
  PLANB_RETURN_IF_ERROR(MmdbFile::Open(path, limits, &file));
  return file->ForEachNetwork([&](const MmdbNetwork& n) {
    out->push_back(n);
    return Status::Ok();
  });
}

// Addresses to ask mmdblookup about in a network: its first, its last, and one between.
std::vector<std::string> Samples(const MmdbNetwork& n) {
  std::array<uint8_t, 16> mid = n.first;
  const int bytes = n.ipv6 ? 16 : 4;
  if (n.prefix_len < bytes * 8)
    mid[static_cast<size_t>(n.prefix_len / 8)] ^= static_cast<uint8_t>(0x80 >> (n.prefix_len % 8));
  return {AddressText(n.ipv6, n.first), AddressText(n.ipv6, mid), AddressText(n.ipv6, n.last)};
}

// Every network yielded: address text, prefix and record; then mmdblookup at sampled addresses of each.
void ExpectNetworks(const std::string& path, const std::vector<MmdbNetwork>& got, const std::vector<Net>& want,
                    const json& types) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("network " + std::to_string(i) + " " + want[i].first + "/" + std::to_string(want[i].prefix_len));
    const bool ipv6 = want[i].first.find(':') != std::string::npos;
    EXPECT_EQ(got[i].ipv6, ipv6);
    EXPECT_EQ(AddressText(got[i].ipv6, got[i].first), want[i].first);
    EXPECT_EQ(AddressText(got[i].ipv6, got[i].last), want[i].last);
    EXPECT_EQ(got[i].prefix_len, want[i].prefix_len);
    EXPECT_EQ(got[i].record_json, want[i].record_json);
    for (const std::string& address : Samples(got[i])) {
      EXPECT_EQ(MmdblookupLines(path, address), MmdblookupLinesFor(got[i].record_json, types)) << address;
    }
  }
}

json NameTypes() { return {{"name", "utf8_string"}}; }

json Named(const std::string& network, const std::string& name) {
  return {{"network", network}, {"record", {{"name", name}}}};
}

std::string NameJson(const std::string& name) { return "{\"name\":\"" + name + "\"}"; }

TEST(MmdbNetworks, Ipv4FileYieldsNestedAndAdjacentNetworksInOrder) {
  TempDir dir;
  const std::string path = dir / "v4.mmdb";
  // 1.2.3.0/24 inside 1.0.0.0/8 (inserted later, so it splits the /8); 5.6.7.0/24 and 5.6.8.0/24 adjacent.
  const json description = {{"ip_version", 4},
                            {"record_size", 24},
                            {"database_type", "Test-V4"},
                            {"languages", {"en", "de"}},
                            {"types", NameTypes()},
                            {"networks",
                             {Named("1.0.0.0/8", "outer"), Named("1.2.3.0/24", "inner"), Named("5.6.7.0/24", "seven"),
                              Named("5.6.8.0/24", "eight")}}};
  ASSERT_EQ(MakeMmdb(path, description), "");
  const std::time_t before = std::time(nullptr);
  std::unique_ptr<MmdbFile> file;
  ASSERT_TRUE(MmdbFile::Open(path, MmdbLimits{}, &file).ok());
  EXPECT_EQ(file->ip_version(), 4);
  EXPECT_EQ(file->database_type(), "Test-V4");
  EXPECT_EQ(file->languages(), (std::vector<std::string>{"en", "de"}));
  EXPECT_EQ(file->record_size(), 24);
  EXPECT_GT(file->node_count(), 24u);
  EXPECT_LE(file->build_epoch(), static_cast<uint64_t>(before));
  EXPECT_GT(file->build_epoch(), static_cast<uint64_t>(before) - 600);

  std::vector<MmdbNetwork> got;
  ASSERT_TRUE(ReadAll(path, MmdbLimits{}, &got).ok());
  const std::string outer = NameJson("outer");
  ExpectNetworks(path, got,
                 {{"1.0.0.0", "1.1.255.255", 15, outer},
                  {"1.2.0.0", "1.2.1.255", 23, outer},
                  {"1.2.2.0", "1.2.2.255", 24, outer},
                  {"1.2.3.0", "1.2.3.255", 24, NameJson("inner")},
                  {"1.2.4.0", "1.2.7.255", 22, outer},
                  {"1.2.8.0", "1.2.15.255", 21, outer},
                  {"1.2.16.0", "1.2.31.255", 20, outer},
                  {"1.2.32.0", "1.2.63.255", 19, outer},
                  {"1.2.64.0", "1.2.127.255", 18, outer},
                  {"1.2.128.0", "1.2.255.255", 17, outer},
                  {"1.3.0.0", "1.3.255.255", 16, outer},
                  {"1.4.0.0", "1.7.255.255", 14, outer},
                  {"1.8.0.0", "1.15.255.255", 13, outer},
                  {"1.16.0.0", "1.31.255.255", 12, outer},
                  {"1.32.0.0", "1.63.255.255", 11, outer},
                  {"1.64.0.0", "1.127.255.255", 10, outer},
                  {"1.128.0.0", "1.255.255.255", 9, outer},
                  {"5.6.7.0", "5.6.7.255", 24, NameJson("seven")},
                  {"5.6.8.0", "5.6.8.255", 24, NameJson("eight")}},
                 NameTypes());
  // An address outside every network is a miss there too, so the file holds only what the walk yielded.
  const std::vector<std::string> miss = MmdblookupLines(path, "5.6.9.1");
  ASSERT_EQ(miss.size(), 1u);
  EXPECT_THAT(miss[0], HasSubstr("Could not find an entry"));
}

TEST(MmdbNetworks, Ipv6FileYieldsIpv4NetworksOnceAndSkipsTheAliases) {
  TempDir dir;
  const std::string path = dir / "v6.mmdb";
  // The writer's aliases point ::ffff:0:0/96, 2001::/32 and 2002::/16 at the IPv4 subtree (::/96).
  const json description = {{"ip_version", 6},
                            {"record_size", 28},
                            {"alias_ipv6_to_ipv4", true},
                            {"types", NameTypes()},
                            {"networks",
                             {Named("1.2.3.0/24", "three"), Named("1.2.4.0/24", "four"), Named("2001:db8::/32", "doc"),
                              Named("2001:db8:1::/48", "one"), Named("2a02::/16", "wide")}}};
  ASSERT_EQ(MakeMmdb(path, description), "");
  std::unique_ptr<MmdbFile> file;
  ASSERT_TRUE(MmdbFile::Open(path, MmdbLimits{}, &file).ok());
  EXPECT_EQ(file->ip_version(), 6);
  EXPECT_EQ(file->record_size(), 28);
  // The aliases are really there: mmdblookup answers the IPv4 record at ::ffff:1.2.3.4 and 2002:102:304::.
  const std::vector<std::string> three = MmdblookupLinesFor(NameJson("three"), NameTypes());
  EXPECT_EQ(MmdblookupLines(path, "::ffff:1.2.3.4"), three);
  EXPECT_EQ(MmdblookupLines(path, "2002:102:304::1"), three);
  EXPECT_EQ(MmdblookupLines(path, "2001:0:102:304::"), three);  // Teredo
  EXPECT_EQ(MmdblookupLines(path, "1.2.3.4"), three);

  std::vector<MmdbNetwork> got;
  ASSERT_TRUE(ReadAll(path, MmdbLimits{}, &got).ok());
  const std::string doc = NameJson("doc");
  ExpectNetworks(path, got,
                 {{"1.2.3.0", "1.2.3.255", 24, NameJson("three")},
                  {"1.2.4.0", "1.2.4.255", 24, NameJson("four")},
                  {"2001:db8::", "2001:db8:0:ffff:ffff:ffff:ffff:ffff", 48, doc},
                  {"2001:db8:1::", "2001:db8:1:ffff:ffff:ffff:ffff:ffff", 48, NameJson("one")},
                  {"2001:db8:2::", "2001:db8:3:ffff:ffff:ffff:ffff:ffff", 47, doc},
                  {"2001:db8:4::", "2001:db8:7:ffff:ffff:ffff:ffff:ffff", 46, doc},
                  {"2001:db8:8::", "2001:db8:f:ffff:ffff:ffff:ffff:ffff", 45, doc},
                  {"2001:db8:10::", "2001:db8:1f:ffff:ffff:ffff:ffff:ffff", 44, doc},
                  {"2001:db8:20::", "2001:db8:3f:ffff:ffff:ffff:ffff:ffff", 43, doc},
                  {"2001:db8:40::", "2001:db8:7f:ffff:ffff:ffff:ffff:ffff", 42, doc},
                  {"2001:db8:80::", "2001:db8:ff:ffff:ffff:ffff:ffff:ffff", 41, doc},
                  {"2001:db8:100::", "2001:db8:1ff:ffff:ffff:ffff:ffff:ffff", 40, doc},
                  {"2001:db8:200::", "2001:db8:3ff:ffff:ffff:ffff:ffff:ffff", 39, doc},
                  {"2001:db8:400::", "2001:db8:7ff:ffff:ffff:ffff:ffff:ffff", 38, doc},
                  {"2001:db8:800::", "2001:db8:fff:ffff:ffff:ffff:ffff:ffff", 37, doc},
                  {"2001:db8:1000::", "2001:db8:1fff:ffff:ffff:ffff:ffff:ffff", 36, doc},
                  {"2001:db8:2000::", "2001:db8:3fff:ffff:ffff:ffff:ffff:ffff", 35, doc},
                  {"2001:db8:4000::", "2001:db8:7fff:ffff:ffff:ffff:ffff:ffff", 34, doc},
                  {"2001:db8:8000::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 33, doc},
                  {"2a02::", "2a02:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 16, NameJson("wide")}},
                 NameTypes());
}

// Every type the format has, in nested maps and arrays: the exact JSON text, the values it decodes to, and what
// mmdblookup prints for the same address.
TEST(MmdbNetworks, RecordsKeepEveryTypeAsJson) {
  TempDir dir;
  const std::string path = dir / "types.mmdb";
  const json types = {{"name", "utf8_string"},
                      {"names", "map"},
                      {"en", "utf8_string"},
                      {"ja", "utf8_string"},
                      {"tags", {"array", "utf8_string"}},
                      {"items", {"array", "map"}},
                      {"id", "uint16"},
                      {"ratio", "double"},
                      {"one", "double"},
                      {"tiny", "float"},
                      {"half", "float"},
                      {"u16", "uint16"},
                      {"u32", "uint32"},
                      {"u64", "uint64"},
                      {"u128", "uint128"},
                      {"small128", "uint128"},
                      {"neg", "int32"},
                      {"yes", "boolean"},
                      {"no", "boolean"},
                      {"raw", "bytes"},
                      {"empty", {"array", "uint32"}}};
  const json record = {{"name", "say \"hi\" \\ back\nslash \u00e9\u4e16"},
                       {"names", {{"en", "Zurich"}, {"ja", "\u30c1\u30e5\u30fc\u30ea\u30c3\u30d2"}}},
                       {"tags", {"a", "b,c"}},
                       {"items", {{{"id", 1}, {"ratio", 0.1}}, {{"id", 2}, {"ratio", -1.2345e103}}}},
                       {"one", 1.0},
                       {"tiny", 2.5e-7},
                       {"half", 0.5},
                       {"u16", 65535},
                       {"u32", 4294967295u},
                       {"u64", "18446744073709551615"},
                       {"u128", "340282366920938463463374607431768211455"},
                       {"small128", "1"},
                       {"neg", -2147483647},
                       {"yes", true},
                       {"no", false},
                       {"raw", "00ff10"},
                       {"empty", json::array()}};
  const json description = {{"ip_version", 4},
                            {"record_size", 32},
                            {"types", types},
                            {"networks", {{{"network", "9.9.9.0/24"}, {"record", record}}}}};
  ASSERT_EQ(MakeMmdb(path, description), "");
  std::vector<MmdbNetwork> got;
  ASSERT_TRUE(ReadAll(path, MmdbLimits{}, &got).ok());
  // Keys come in the file's order (the writer sorts them); floats in their shortest form that reads back as the
  // same float; bytes as base64.
  const std::string want =
      "{\"empty\":[],\"half\":0.5,\"items\":[{\"id\":1,\"ratio\":0.1},{\"id\":2,\"ratio\":-1.2345e+103}],"
      "\"name\":\"say \\\"hi\\\" \\\\ back\\nslash \u00e9\u4e16\",\"names\":{\"en\":\"Zurich\","
      "\"ja\":\"\u30c1\u30e5\u30fc\u30ea\u30c3\u30d2\"},\"neg\":-2147483647,\"no\":false,\"one\":1.0,"
      "\"raw\":\"AP8Q\",\"small128\":1,\"tags\":[\"a\",\"b,c\"],\"tiny\":2.5e-07,"
      "\"u128\":340282366920938463463374607431768211455,\"u16\":65535,\"u32\":4294967295,"
      "\"u64\":18446744073709551615,\"yes\":true}";
  ExpectNetworks(path, got, {{"9.9.9.0", "9.9.9.255", 24, want}}, types);
  ASSERT_EQ(got.size(), 1u);
  const json parsed = json::parse(got[0].record_json);
  EXPECT_EQ(parsed["name"], record["name"]);
  EXPECT_EQ(parsed["names"], record["names"]);
  EXPECT_EQ(parsed["items"][1]["ratio"].get<double>(), -1.2345e103);
  EXPECT_TRUE(parsed["one"].is_number_float());
  EXPECT_EQ(static_cast<float>(parsed["tiny"].get<double>()), 2.5e-7f);
  EXPECT_EQ(parsed["u64"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(parsed["neg"].get<int32_t>(), -2147483647);
  EXPECT_TRUE(parsed["empty"].is_array() && parsed["empty"].empty());
}

// A small IPv4 file with 32-bit records (each tree record is 4 big-endian bytes) and where its sections start.
struct Layout {
  std::string path;
  std::string bytes;
  size_t tree_size = 0;       // node_count * 8
  size_t data_start = 0;      // after the tree and its 16 zero bytes
  size_t metadata_start = 0;  // the last "\xab\xcd\xefMaxMind.com"
};

const std::string kMarker = "\xab\xcd\xefMaxMind.com";

Layout MakeLayout(const TempDir& dir, const json& networks) {
  Layout layout;
  layout.path = dir / "good.mmdb";
  const json description = {{"ip_version", 4}, {"record_size", 32}, {"types", NameTypes()}, {"networks", networks}};
  const std::string made = MakeMmdb(layout.path, description);
  EXPECT_EQ(made, "");
  std::unique_ptr<MmdbFile> file;
  EXPECT_TRUE(MmdbFile::Open(layout.path, MmdbLimits{}, &file).ok());
  if (file == nullptr) return layout;
  layout.bytes = ReadFile(layout.path);
  layout.tree_size = size_t{file->node_count()} * 8;
  layout.data_start = layout.tree_size + 16;
  layout.metadata_start = layout.bytes.rfind(kMarker);
  return layout;
}

Layout MakeLayout(const TempDir& dir) {
  return MakeLayout(dir, {Named("1.2.3.0/24", "three"), Named("1.2.4.0/24", "four")});
}

// Reads `bytes` written to `name` in `dir`; the status of opening and walking it.
Status ReadBytes(const TempDir& dir, const std::string& name, const std::string& bytes, MmdbLimits limits = {}) {
  WriteFile(dir / name, bytes);
  std::vector<MmdbNetwork> got;
  return ReadAll(dir / name, limits, &got);
}

std::string Strerror(int code) { return MMDB_strerror(code); }

TEST(MmdbNetworks, TruncatedFilesAreErrorsNamingTheFile) {
  TempDir dir;
  const Layout layout = MakeLayout(dir);
  ASSERT_NE(layout.metadata_start, std::string::npos);
  ASSERT_LT(layout.data_start, layout.metadata_start);
  // Without its marker libmaxminddb finds no metadata; with it, the metadata map does not decode.
  const std::string no_metadata = Strerror(MMDB_INVALID_METADATA_ERROR);
  const std::string bad_data = Strerror(MMDB_INVALID_DATA_ERROR);
  const struct {
    const char* where;
    size_t size;
    std::string error;
  } cuts[] = {{"in the tree", layout.tree_size / 2, no_metadata},
              {"in the data section", (layout.data_start + layout.metadata_start) / 2, no_metadata},
              {"in the metadata marker", layout.metadata_start + 5, no_metadata},
              {"in the metadata", layout.metadata_start + kMarker.size() + 20, bad_data},
              {"one byte short", layout.bytes.size() - 1, bad_data},
              {"empty", 0, "the file is empty"}};
  for (const auto& cut : cuts) {
    SCOPED_TRACE(cut.where);
    const std::string name = "cut" + std::to_string(cut.size) + ".mmdb";
    const Status s = ReadBytes(dir, name, layout.bytes.substr(0, cut.size));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
    EXPECT_EQ(s.message(), dir / name + ": not a valid MaxMind DB file: " + cut.error);
  }
}

TEST(MmdbNetworks, BadMetadataMarkerIsAnError) {
  TempDir dir;
  Layout layout = MakeLayout(dir);
  ASSERT_NE(layout.metadata_start, std::string::npos);
  layout.bytes.replace(layout.metadata_start + kMarker.size() - 3, 3, "org");
  const Status s = ReadBytes(dir, "marker.mmdb", layout.bytes);
  EXPECT_EQ(s.message(),
            dir / "marker.mmdb" + ": not a valid MaxMind DB file: " + Strerror(MMDB_INVALID_METADATA_ERROR));
}

TEST(MmdbNetworks, NotAnMmdbFileIsAnError) {
  TempDir dir;
  const Status s = ReadBytes(dir, "text.mmdb", "1.2.3.0/24,three\n");
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.message(), dir / "text.mmdb" + ": not a valid MaxMind DB file: " + Strerror(MMDB_INVALID_METADATA_ERROR));
}

TEST(MmdbNetworks, MissingFileAndDirectoryAreErrors) {
  TempDir dir;
  std::vector<MmdbNetwork> got;
  Status s = ReadAll(dir / "absent.mmdb", MmdbLimits{}, &got);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_EQ(s.message(), dir / "absent.mmdb" + ": cannot open the MaxMind DB file: No such file or directory");
  s = ReadAll(dir.path(), MmdbLimits{}, &got);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_EQ(s.message(), dir.path() + ": not a regular file (a MaxMind DB file is expected)");
}

void PutRecord(std::string* bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) (*bytes)[offset + static_cast<size_t>(i)] = static_cast<char>(value >> (24 - 8 * i));
}

TEST(MmdbNetworks, TreeRecordPointingOutsideTheFileIsAnError) {
  TempDir dir;
  Layout layout = MakeLayout(dir);
  PutRecord(&layout.bytes, 0, 0xfffffff0u);  // node 0's left record, far past the data section
  const Status s = ReadBytes(dir, "outside.mmdb", layout.bytes);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.message(),
            dir / "outside.mmdb" + ": corrupt search tree: node 0's left record (4294967280) points outside the file");
}

uint32_t GetRecord(const std::string& bytes, size_t offset) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[offset + static_cast<size_t>(i)]);
  return v;
}

TEST(MmdbNetworks, TreeWithACycleIsAnError) {
  TempDir dir;
  Layout layout = MakeLayout(dir);
  // Node 0's left child points to itself: the walk would go round for ever without its bound.
  const uint32_t child = GetRecord(layout.bytes, 0);
  ASSERT_GT(child, 0u);
  PutRecord(&layout.bytes, size_t{child} * 8, child);
  Status s = ReadBytes(dir, "cycle.mmdb", layout.bytes);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_THAT(s.message(), StartsWith(dir / "cycle.mmdb" + ": corrupt search tree: more nodes reached than its "
                                                           "node_count "));
  // A record back to the root libmaxminddb itself calls invalid.
  layout = MakeLayout(dir);
  PutRecord(&layout.bytes, 0, 0);
  s = ReadBytes(dir, "root.mmdb", layout.bytes);
  EXPECT_EQ(s.message(), dir / "root.mmdb" +
                             ": corrupt search tree: node 0's left record (0) points back to the "
                             "root node");
}

TEST(MmdbNetworks, UndecodableRecordIsAnError) {
  TempDir dir;
  Layout layout = MakeLayout(dir);
  ASSERT_EQ(layout.bytes.substr(layout.data_start, 1), "\xe1");  // the first record: a map of one pair
  // Its control byte made a 4-byte pointer (001 11 ...) far past the data section.
  std::string bytes = layout.bytes;
  bytes.replace(layout.data_start, 5, "\x3f\xff\xff\xff\xff");
  Status s = ReadBytes(dir, "pointer.mmdb", bytes);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.message(), dir / "pointer.mmdb" + ": corrupt data section (the record at data offset 0): " +
                             Strerror(MMDB_INVALID_DATA_ERROR));
  // Extended type 7 + 0xf0 decodes in libmaxminddb but is no type of the format.
  bytes = layout.bytes;
  bytes.replace(layout.data_start, 2, std::string("\x00\xf0", 2));
  s = ReadBytes(dir, "type.mmdb", bytes);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.message(), dir / "type.mmdb" + ": a value of unknown data type 247 (the record at data offset 0)");
}

TEST(MmdbNetworks, InvalidUtf8IsAnError) {
  TempDir dir;
  Layout layout = MakeLayout(dir, json::array({Named("1.2.3.0/24", "BADUTF8X")}));
  const size_t at = layout.bytes.find("BADUTF8X");
  ASSERT_NE(at, std::string::npos);
  layout.bytes[at + 7] = '\xff';
  const Status s = ReadBytes(dir, "utf8.mmdb", layout.bytes);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_THAT(s.message(), StartsWith(dir / "utf8.mmdb" + ": a string is not valid UTF-8 (the record at data offset "));
}

json Nested(int maps) {  // `maps` maps inside each other, the record being the first
  json value = {{"name", "deep"}};
  for (int i = 1; i < maps; ++i) value = json{{"n", value}};
  return value;
}

TEST(MmdbNetworks, RecordDeeperThanTheLimitIsAnError) {
  TempDir dir;
  const std::string path = dir / "deep.mmdb";
  const json types = {{"name", "utf8_string"}, {"n", "map"}};
  const json description = {
      {"ip_version", 4},
      {"record_size", 24},
      {"types", types},
      {"networks",
       {{{"network", "1.2.3.0/24"}, {"record", Nested(5)}}, {{"network", "1.2.4.0/24"}, {"record", Nested(40)}}}}};
  ASSERT_EQ(MakeMmdb(path, description), "");
  std::vector<MmdbNetwork> got;
  MmdbLimits limits;
  limits.record.max_depth = 5;
  limits.max_networks = 1;  // the walk stops before the deeper one
  EXPECT_EQ(ReadAll(path, limits, &got).message(), path + ": more networks than the limit of 1");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record_json, "{\"n\":{\"n\":{\"n\":{\"n\":{\"name\":\"deep\"}}}}}");
  limits.record.max_depth = 4;
  Status s = ReadAll(path, limits, &got);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), StartsWith(path + ": the record nests maps and arrays deeper than the limit of 4 ("));
  s = ReadAll(path, MmdbLimits{}, &got);  // the default: 32
  EXPECT_THAT(s.message(), StartsWith(path + ": the record nests maps and arrays deeper than the limit of 32 ("));
}

TEST(MmdbNetworks, RecordLargerThanTheLimitIsAnError) {
  TempDir dir;
  const Layout layout = MakeLayout(dir, json::array({Named("1.2.3.0/24", std::string(3000, 'x'))}));
  const size_t json_size = 3000 + std::string("{\"name\":\"\"}").size();
  std::vector<MmdbNetwork> got;
  MmdbLimits limits;
  limits.record.max_bytes = json_size;
  ASSERT_TRUE(ReadAll(layout.path, limits, &got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record_json.size(), json_size);
  limits.record.max_bytes = json_size - 1;
  const Status s = ReadAll(layout.path, limits, &got);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), StartsWith(layout.path + ": the record's JSON is larger than the limit of " +
                                      std::to_string(json_size - 1) + " bytes ("));
}

TEST(MmdbNetworks, VisitorErrorStopsTheWalk) {
  TempDir dir;
  const Layout layout = MakeLayout(dir);
  std::unique_ptr<MmdbFile> file;
  ASSERT_TRUE(MmdbFile::Open(layout.path, MmdbLimits{}, &file).ok());
  int calls = 0;
  const Status s = file->ForEachNetwork([&](const MmdbNetwork&) {
    ++calls;
    return Status::Invalid("stop here");
  });
  EXPECT_EQ(s.message(), "stop here");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace planb
