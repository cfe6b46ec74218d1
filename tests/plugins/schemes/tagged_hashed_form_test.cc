// The hashed form of the tagged schemes, `hybrid` (tag 0x01) and `variable` (tag 0x02): a long key's row is the
// tag + hash + clash number, its value the key length (LEB128 varint) + the key, as `hashed` writes them after
// the tag. Loaded through the real registry, on real LMDB tables; the State matrix covers the rest of each scheme.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "planb/key_scheme.h"
#include "planb/keyed_search.h"
#include "support/clashing_keys.h"
#include "support/map_fixture.h"
#include "support/store_lookup.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClashingKeys;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::ExpectedHash;
using ::planb::testing::LookupOrMiss;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

struct TaggedScheme {
  const char* name;
  char hashed_tag;
};

std::string Clash(uint16_t n) { return std::string{static_cast<char>(n >> 8), static_cast<char>(n & 0xFF)}; }

// The two-byte varint of a key of 128 to 16,383 bytes.
std::string Varint2(size_t n) { return std::string{static_cast<char>((n & 0x7F) | 0x80), static_cast<char>(n >> 7)}; }

class TaggedHashedFormTest : public ::testing::TestWithParam<TaggedScheme> {
 protected:
  void SetUp() override {
    Status s = CreateMapPlugins(MakeMapConfig("m", "state", GetParam().name, {{"hash_bits", "8"}}), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = CreateMapEnv(dir_ / "map", plugins_, &env_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = txn_.Begin(env_, true);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  const Table& table() const { return txn_.table(); }

  void Put(std::string_view key, std::string_view value) {
    ErrorBuffer error;
    ASSERT_EQ(plugins_->store()->Put(table(), StateRecord(key, value), &error), Code::kOk) << error.message;
  }

  std::string Lookup(std::string_view key, int64_t time_ms = 0) {
    return LookupOrMiss(*plugins_, table(), key, time_ms);
  }

  // The row's value at LMDB key `lmdb_key`, or "(none)".
  std::string RowValue(const std::string& lmdb_key) {
    MDB_val k{lmdb_key.size(), const_cast<char*>(lmdb_key.data())};
    MDB_val v;
    if (mdb_get(table().txn, table().dbi, &k, &v) != MDB_SUCCESS) return "(none)";
    return std::string(static_cast<const char*>(v.mv_data), v.mv_size);
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  std::shared_ptr<MapEnv> env_;
  MapTxn txn_;
};

// Keys past LMDB's key limit, so that both schemes hash them whatever their direct_max.
std::vector<std::string> LongClashingKeys(size_t count) { return ClashingKeys(count, std::string(600, 'k')); }

TEST_P(TaggedHashedFormTest, LongKeysTakeTheTaggedHashedLayoutWithClashNumbersInArrivalOrder) {
  const std::vector<std::string> keys = LongClashingKeys(3);
  for (size_t i = 0; i < keys.size(); ++i) Put(keys[i], "value " + std::to_string(i));
  const char type = static_cast<char>(ValueType::kString);
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string lmdb_key = GetParam().hashed_tag + ExpectedHash(keys[i], 8) + Clash(static_cast<uint16_t>(i));
    // The stored key, State's 16-byte version, the type and the value.
    const std::string row = RowValue(lmdb_key);
    const std::string stored_key = Varint2(keys[i].size()) + keys[i];
    ASSERT_EQ(row.size(), stored_key.size() + 16 + 1 + ("value " + std::to_string(i)).size()) << i;
    EXPECT_EQ(row.substr(0, stored_key.size()), stored_key) << i;
    EXPECT_EQ(row.substr(stored_key.size() + 16), type + ("value " + std::to_string(i))) << i;
    EXPECT_EQ(Lookup(keys[i]), "value " + std::to_string(i)) << i;
  }
  std::string absent = keys[0];
  absent.back() = 'x';
  EXPECT_EQ(Lookup(absent), "(miss)");
  // A short key beside them keeps the direct form (tag 0x00 + the key itself).
  Put("short", "direct");
  EXPECT_EQ(RowValue(std::string(1, '\0') + "short").substr(16), std::string(1, type) + "direct");
}

TEST_P(TaggedHashedFormTest, AGapInTheClashNumbersIsSkippedAndANewKeyGoesPastTheGreatest) {
  const std::vector<std::string> keys = LongClashingKeys(4);
  for (size_t i = 0; i < 3; ++i) Put(keys[i], "value " + std::to_string(i));
  const std::string hash = GetParam().hashed_tag + ExpectedHash(keys[0], 8);
  const std::string first = hash + Clash(0);
  MDB_val k{first.size(), const_cast<char*>(first.data())};
  ASSERT_EQ(mdb_del(table().txn, table().dbi, &k, nullptr), MDB_SUCCESS);  // as a deletion of keys[0] leaves it
  EXPECT_EQ(Lookup(keys[0]), "(miss)");
  EXPECT_EQ(Lookup(keys[1]), "value 1");
  EXPECT_EQ(Lookup(keys[2]), "value 2");
  Put(keys[3], "value 3");
  EXPECT_EQ(RowValue(hash + Clash(0)), "(none)");  // clash 0 is not reused while a greater number lives
  EXPECT_NE(RowValue(hash + Clash(3)), "(none)");
  EXPECT_EQ(Lookup(keys[3]), "value 3");
}

TEST_P(TaggedHashedFormTest, DecodeRowRefusesAHashedRowWhoseKeyLengthIsNoShortestVarint) {
  const KeyScheme& scheme = *plugins_->scheme();
  const std::string lmdb_key = GetParam().hashed_tag + std::string(1, 'h') + Clash(0);
  Bytes key;
  uint32_t prefix_size = 0;
  uint32_t stored_key_size = 0;
  for (const std::string& bad : {std::string(), std::string("\x80"), std::string("\x80\x00", 2)}) {
    ErrorBuffer error;
    EXPECT_EQ(scheme.DecodeRow(table(), Bytes(lmdb_key), Bytes(bad), &key, &prefix_size, &stored_key_size, &error),
              Code::kCorruption)
        << bad.size();
    EXPECT_NE(std::string(error.message).find("does not start with a valid key length"), std::string::npos)
        << error.message;
  }
  ErrorBuffer error;
  ASSERT_EQ(scheme.DecodeRow(table(), Bytes(lmdb_key), Bytes(std::string_view("\x03" "abcrest")), &key, &prefix_size,
                             &stored_key_size, &error),
            Code::kOk)
      << error.message;
  EXPECT_EQ(key.view(), "abc");
  EXPECT_EQ(prefix_size, lmdb_key.size());
  EXPECT_EQ(stored_key_size, 4u);
}

INSTANTIATE_TEST_SUITE_P(Schemes, TaggedHashedFormTest,
                         ::testing::Values(TaggedScheme{"hybrid", '\x01'}, TaggedScheme{"variable", '\x02'}),
                         [](const ::testing::TestParamInfo<TaggedScheme>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace planb
