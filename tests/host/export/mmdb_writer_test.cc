// The MaxMind DB writer parts (host/export): values encoded by mmdb_data_encoder, a tree from mmdb_search_tree and
// the file from mmdb_file, read back through libmaxminddb's C API: every control-byte size class (< 29, 29 + 1
// byte, 285 + 2 bytes, 65821 + 3 bytes), every type a JSON value maps to, 24- and 28-bit records, the IPv4 alias
// of an IPv6 tree, and the refusals (null, integers outside int32/uint128, non-UTF-8 text, overlapping networks).
#include <gtest/gtest.h>
#include <maxminddb.h>

#include <string>
#include <vector>

#include "host/export/mmdb_data_encoder.h"
#include "host/export/mmdb_file.h"
#include "host/export/mmdb_search_tree.h"
#include "support/test_env.h"

namespace planb {
namespace {

using U128 = unsigned __int128;

class Written {
 public:
  // A file of `tree` with `values` (JSON texts) as data entries 0..n-1.
  Written(const MmdbSearchTree& tree, const std::vector<std::string>& values, uint16_t ip_version) {
    std::string data;
    std::vector<uint32_t> offsets;
    for (const std::string& v : values) {
      offsets.push_back(static_cast<uint32_t>(data.size()));
      const Status s = AppendMmdbJson(v, &data);
      EXPECT_TRUE(s.ok()) << v.substr(0, 80) << ": " << s.message();
    }
    MmdbMetadata metadata;
    metadata.ip_version = ip_version;
    metadata.database_type = "Test-Type";
    metadata.description = "a test";
    metadata.build_epoch = 1700000000;
    std::string file;
    EXPECT_TRUE(AssembleMmdb(tree, data, offsets, metadata, &file).ok());
    path_ = dir_.path() + "/t.mmdb";
    testing::WriteFile(path_, file);
    open_ = MMDB_open(path_.c_str(), MMDB_MODE_MMAP, &mmdb_) == MMDB_SUCCESS;
  }
  ~Written() {
    if (open_) MMDB_close(&mmdb_);
  }
  bool open() const { return open_; }
  const MMDB_s& mmdb() const { return mmdb_; }

  // The entry data of `path...` in the record for `address`; has_data false when absent or not found.
  MMDB_entry_data_s Get(const char* address, std::vector<const char*> path) {
    int gai = 0, error = 0;
    MMDB_lookup_result_s r = MMDB_lookup_string(&mmdb_, address, &gai, &error);
    MMDB_entry_data_s data{};
    if (gai != 0 || error != MMDB_SUCCESS || !r.found_entry) return data;
    path.push_back(nullptr);
    if (MMDB_aget_value(&r.entry, &data, path.data()) != MMDB_SUCCESS) data.has_data = false;
    return data;
  }
  bool Found(const char* address) {
    int gai = 0, error = 0;
    return MMDB_lookup_string(&mmdb_, address, &gai, &error).found_entry;
  }

 private:
  testing::TempDir dir_;
  std::string path_;
  MMDB_s mmdb_{};
  bool open_ = false;
};

std::string Quoted(size_t n) { return "\"" + std::string(n, 'x') + "\""; }

TEST(MmdbWriter, EveryTypeAndSizeClassReadsBack) {
  MmdbSearchTree tree(32);
  ASSERT_TRUE(tree.Insert(U128{10} << 24, 8, 0).ok());    // 10.0.0.0/8
  ASSERT_TRUE(tree.Insert(U128{11} << 24, 16, 1).ok());   // 11.0.0.0/16
  ASSERT_TRUE(tree.Insert((U128{12} << 24) | 5, 32, 2).ok());  // 12.0.0.5/32
  const std::string typed =
      R"({"u16":65535,"u32":65536,"u64":18446744073709551615,"u128":340282366920938463463374607431768211455,)"
      R"("zero":0,"neg":-2147483648,"minus_one":-1,"d":1.5,"e":2e3,"t":true,"f":false,"s":"é \"q\"",)"
      R"("a":[1,"two",[3.25]],"m":{"inner":{"deep":"yes"}},"empty":{}})";
  const std::string sizes = "{\"s28\":" + Quoted(28) + ",\"s29\":" + Quoted(29) + ",\"s284\":" + Quoted(284) +
                            ",\"s285\":" + Quoted(285) + ",\"s65820\":" + Quoted(65820) + ",\"s65821\":" +
                            Quoted(65821) + ",\"s70000\":" + Quoted(70000) + "}";
  Written w(tree, {typed, sizes, R"("a bare string")"}, 4);
  ASSERT_TRUE(w.open());
  EXPECT_EQ(w.mmdb().metadata.ip_version, 4);
  EXPECT_EQ(w.mmdb().metadata.record_size, 24);
  EXPECT_EQ(std::string(w.mmdb().metadata.database_type), "Test-Type");
  EXPECT_EQ(w.mmdb().metadata.build_epoch, 1700000000u);
  EXPECT_EQ(w.mmdb().metadata.binary_format_major_version, 2);

  MMDB_entry_data_s d = w.Get("10.1.2.3", {"u16"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_UINT16);
  EXPECT_EQ(d.uint16, 65535);
  d = w.Get("10.1.2.3", {"u32"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_UINT32);
  EXPECT_EQ(d.uint32, 65536u);
  d = w.Get("10.1.2.3", {"u64"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_UINT64);
  EXPECT_EQ(d.uint64, UINT64_MAX);
  d = w.Get("10.1.2.3", {"u128"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_UINT128);
  d = w.Get("10.1.2.3", {"zero"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_UINT16);
  EXPECT_EQ(d.uint16, 0);
  d = w.Get("10.1.2.3", {"neg"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_INT32);
  EXPECT_EQ(d.int32, INT32_MIN);
  EXPECT_EQ(w.Get("10.1.2.3", {"minus_one"}).int32, -1);
  d = w.Get("10.1.2.3", {"d"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_DOUBLE);
  EXPECT_EQ(d.double_value, 1.5);
  EXPECT_EQ(w.Get("10.1.2.3", {"e"}).double_value, 2000.0);
  d = w.Get("10.1.2.3", {"t"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_BOOLEAN);
  EXPECT_TRUE(d.boolean);
  EXPECT_FALSE(w.Get("10.1.2.3", {"f"}).boolean);
  d = w.Get("10.1.2.3", {"s"});
  EXPECT_EQ(std::string(d.utf8_string, d.data_size), "é \"q\"");
  d = w.Get("10.1.2.3", {"a", "1"});
  EXPECT_EQ(std::string(d.utf8_string, d.data_size), "two");
  EXPECT_EQ(w.Get("10.1.2.3", {"a", "2", "0"}).double_value, 3.25);
  d = w.Get("10.1.2.3", {"m", "inner", "deep"});
  EXPECT_EQ(std::string(d.utf8_string, d.data_size), "yes");
  d = w.Get("10.1.2.3", {"empty"});
  EXPECT_EQ(d.type, MMDB_DATA_TYPE_MAP);
  EXPECT_EQ(d.data_size, 0u);

  for (const auto& [name, n] : std::vector<std::pair<const char*, uint32_t>>{
           {"s28", 28}, {"s29", 29}, {"s284", 284}, {"s285", 285}, {"s65820", 65820}, {"s65821", 65821},
           {"s70000", 70000}}) {
    d = w.Get("11.0.255.255", {name});
    EXPECT_EQ(d.type, MMDB_DATA_TYPE_UTF8_STRING) << name;
    EXPECT_EQ(d.data_size, n) << name;
  }
  // A record that is not a map.
  int gai = 0, error = 0;
  MMDB_lookup_result_s r = MMDB_lookup_string(&w.mmdb(), "12.0.0.5", &gai, &error);
  ASSERT_TRUE(r.found_entry);
  MMDB_entry_data_s bare;
  ASSERT_EQ(MMDB_get_value(&r.entry, &bare, nullptr), MMDB_SUCCESS);
  EXPECT_EQ(std::string(bare.utf8_string, bare.data_size), "a bare string");
  // Outside every network: no entry.
  EXPECT_FALSE(w.Found("12.0.0.4"));
  EXPECT_FALSE(w.Found("11.1.0.0"));
  EXPECT_FALSE(w.Found("9.255.255.255"));
}

TEST(MmdbWriter, ALargeDataSectionTakes28BitRecords) {
  MmdbSearchTree tree(32);
  ASSERT_TRUE(tree.Insert(U128{1} << 24, 8, 0).ok());
  ASSERT_TRUE(tree.Insert(U128{200} << 24, 8, 1).ok());
  Written w(tree, {Quoted(16843036), R"({"after":"the big one"})"}, 4);  // past 2^24 bytes of data
  ASSERT_TRUE(w.open());
  EXPECT_EQ(w.mmdb().metadata.record_size, 28);
  MMDB_entry_data_s d = w.Get("200.1.1.1", {"after"});
  ASSERT_TRUE(d.has_data);
  EXPECT_EQ(std::string(d.utf8_string, d.data_size), "the big one");
}

TEST(MmdbWriter, AnIpv6TreeAliasesTheIpv4Space) {
  MmdbSearchTree tree(128);
  ASSERT_TRUE(tree.Insert(U128{10} << 24, 104, 0).ok());  // ::10.0.0.0/104, the IPv4 10.0.0.0/8
  ASSERT_TRUE(tree.Insert(U128{0x20010db8} << 96, 32, 1).ok());
  ASSERT_TRUE(tree.Alias(U128{0xFFFF} << 32, 0, 96).ok());
  Written w(tree, {R"({"v":"ten"})", R"({"v":"doc"})"}, 6);
  ASSERT_TRUE(w.open());
  for (const char* address : {"10.9.8.7", "::ffff:10.9.8.7", "::10.9.8.7"}) {
    const MMDB_entry_data_s d = w.Get(address, {"v"});
    ASSERT_TRUE(d.has_data) << address;
    EXPECT_EQ(std::string(d.utf8_string, d.data_size), "ten") << address;
  }
  const MMDB_entry_data_s d = w.Get("2001:db8::1", {"v"});
  EXPECT_EQ(std::string(d.utf8_string, d.data_size), "doc");
  EXPECT_FALSE(w.Found("11.0.0.0"));
  EXPECT_FALSE(w.Found("::ffff:11.0.0.0"));
  EXPECT_FALSE(w.Found("2001:db9::"));
}

TEST(MmdbWriter, RefusesWhatTheFormatCannotHold) {
  std::string out;
  for (const auto& [json, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"a":{"b":null}})", "member a.b is null"},
           {"null", "the value is null"},
           {R"({"n":-2147483649})", "member n is the integer -2147483649, below -2147483648"},
           {R"([1,340282366920938463463374607431768211456])", "member [1] is the integer 3402823669209384634633746074"
                                                             "31768211456, beyond uint128"},
           {R"({"x":1e400})", "member x is the number 1e400, beyond a double's range"}}) {
    out.clear();
    const Status s = AppendMmdbJson(json, &out);
    EXPECT_FALSE(s.ok()) << json;
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
  }
  EXPECT_FALSE(AppendMmdbText("\xFF\xFE", &out).ok());
  EXPECT_TRUE(AppendMmdbText("plain", &out).ok());

  MmdbSearchTree tree(32);
  ASSERT_TRUE(tree.Insert(U128{10} << 24, 8, 0).ok());
  EXPECT_FALSE(tree.Insert(U128{10} << 24, 16, 1).ok()) << "inside a network already written";
  EXPECT_FALSE(tree.Insert(U128{0}, 1, 1).ok()) << "around it";
  EXPECT_FALSE(tree.Insert(U128{0}, 0, 1).ok()) << "a /0";
  EXPECT_FALSE(tree.Insert(U128{0}, 33, 1).ok()) << "longer than the address";
}

}  // namespace
}  // namespace planb
