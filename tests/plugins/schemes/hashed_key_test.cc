// The `hashed` key scheme, loaded through the real registry and used on real LMDB tables.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planb/encoding.h"
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
using ::planb::testing::ExpectedHash;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::LookupOrMiss;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::SchemeInstance;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::string Clash(uint16_t n) { return std::string{static_cast<char>(n >> 8), static_cast<char>(n & 0xFF)}; }

class HashedKeyTest : public ::testing::Test {
 protected:
  // A State map with the hashed scheme in a fresh LMDB, with a write transaction open.
  void Open(std::vector<std::pair<std::string, std::string>> options = {}, const char* type = "state") {
    Status s = CreateMapPlugins(MakeMapConfig("cities", type, "hashed", std::move(options)), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = CreateMapEnv(dir_ / "map", plugins_, &env_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = txn_.Begin(env_, true);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  const KeyScheme& scheme() const { return *plugins_->scheme(); }
  const Table& table() const { return txn_.table(); }

  void Put(std::string_view key, std::string_view value) {
    ErrorBuffer error;
    ASSERT_EQ(plugins_->store()->Put(table(), StateRecord(key, value), &error), Code::kOk) << error.message;
  }

  Code Resolve(std::string_view key, Intent intent, KeyPrefix* out, ErrorBuffer* error = nullptr) {
    ErrorBuffer local;
    return ResolveKey(table(), scheme(), Bytes(key), 0, intent, out, error != nullptr ? error : &local);
  }

  // A Temporal State row (the map was opened with type "temporal").
  void PutAt(std::string_view key, int64_t time_ms, std::string_view value) {
    Record record;
    record.has_key = record.has_value = record.time_given = true;
    record.key = Bytes(key);
    record.time_ms = time_ms;
    record.value = Bytes(value);
    ErrorBuffer error;
    ASSERT_EQ(plugins_->store()->Put(table(), record, &error), Code::kOk) << error.message;
  }

  // The store's lookup of `key` (at `time_ms`, for temporal maps): the value, or "(miss)".
  std::string Lookup(std::string_view key, int64_t time_ms = 0) {
    return LookupOrMiss(*plugins_, table(), key, time_ms);
  }

  void DeleteRow(const std::string& lmdb_key) {
    MDB_val k{lmdb_key.size(), const_cast<char*>(lmdb_key.data())};
    ASSERT_EQ(mdb_del(table().txn, table().dbi, &k, nullptr), MDB_SUCCESS);
  }

  // The key's row at its prefix (State: no suffix), found as lookups find it.
  Code Find(std::string_view key, KeySearch* out) {
    ErrorBuffer local;
    return FindKeyedRow(table(), scheme(), Bytes(key), Bytes(), Seek::kExact, Intent::kRead, out, &local);
  }

  // Every LMDB key of the table, in order.
  std::vector<std::string> LmdbKeys() {
    std::vector<std::string> keys;
    MDB_val k;
    MDB_val v;
    for (int rc = mdb_cursor_get(table().cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(table().cursor, &k, &v, MDB_NEXT)) {
      keys.emplace_back(static_cast<const char*>(k.mv_data), k.mv_size);
    }
    return keys;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  std::shared_ptr<MapEnv> env_;
  MapTxn txn_;
};

TEST_F(HashedKeyTest, LayoutNamesTheHashBits) {
  for (const char* bits : {"8", "12", "64"}) {
    std::shared_ptr<const MapPlugins> plugins;
    ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("m", "state", "hashed", {{"hash_bits", bits}}), &plugins).ok());
    EXPECT_EQ(plugins->scheme()->Layout().view(), std::string("hash_bits=") + bits);
  }
  Open();
  EXPECT_EQ(scheme().Layout().view(), "hash_bits=64");
}

TEST_F(HashedKeyTest, PrefixIsTheTopHashBitsThenClashNumberZero) {
  Open();
  for (unsigned bits : {8u, 12u, 33u, 64u}) {
    SchemeInstance scheme;
    ASSERT_TRUE(scheme.Create("hashed", 0, {{"hash_bits", std::to_string(bits)}}).ok());
    KeyPrefix resolved;
    ErrorBuffer error;
    ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(std::string_view("Paris")), 0, Intent::kWrite, &resolved, &error), Code::kOk)
        << error.message;
    EXPECT_EQ(resolved.view().view(), ExpectedHash("Paris", bits) + Clash(0)) << bits;
  }
}

TEST_F(HashedKeyTest, StoredKeyIsAVarintLengthThenKeyBytes) {
  Open();
  const std::string key("k\0y", 3);
  ASSERT_EQ(scheme().StoredKeySize(KeyPrefix(), Bytes(key)), 4u);
  uint8_t out[4];
  scheme().WriteStoredKey(KeyPrefix(), Bytes(key), out);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 4), std::string("\3k\0y", 4));
  EXPECT_EQ(scheme().StoredKeySize(KeyPrefix(), Bytes()), 1u);

  // LEB128: 7 bits a byte, low bits first, the top bit set on all but the last byte.
  const std::vector<std::pair<size_t, std::string>> lengths = {
      {127, "\x7F"}, {128, "\x80\x01"}, {300, "\xAC\x02"}, {16383, "\xFF\x7F"}, {16384, "\x80\x80\x01"}};
  for (const auto& [size, encoded] : lengths) {
    const std::string long_key(size, 'k');
    const uint32_t stored_size = scheme().StoredKeySize(KeyPrefix(), Bytes(long_key));
    ASSERT_EQ(stored_size, encoded.size() + size) << size;
    std::string stored(stored_size, '\0');
    scheme().WriteStoredKey(KeyPrefix(), Bytes(long_key), reinterpret_cast<uint8_t*>(stored.data()));
    EXPECT_EQ(stored.substr(0, encoded.size()), encoded) << size;

    // And it reads back: DecodeRow finds the key and where the value starts.
    const std::string value = stored + "payload";
    Bytes decoded;
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    ErrorBuffer error;
    ASSERT_EQ(scheme().DecodeRow(table(), Bytes(std::string(10, 'h')), Bytes(value), &decoded, &prefix_size,
                                 &stored_key_size, &error),
              Code::kOk)
        << error.message;
    EXPECT_EQ(decoded.view(), long_key);
    EXPECT_EQ(stored_key_size, stored_size);
  }
}

// SDK 7.5: MatchStoredKey answers RowHasKey and StoredKeySize at once, and values are stored as given unless
// value_dedup is on (lookups then skip DecodeValue).
TEST_F(HashedKeyTest, MatchStoredKeyGivesStoredKeySizeAndValuesAreAsGivenWithoutDedup) {
  Open();
  EXPECT_TRUE(scheme().StoresValuesAsGiven());
  for (const size_t size : {size_t{0}, size_t{5}, size_t{127}, size_t{128}, size_t{600}}) {
    const std::string key(size, 'k');
    std::string stored(scheme().StoredKeySize(KeyPrefix(), Bytes(key)), '\0');
    scheme().WriteStoredKey(KeyPrefix(), Bytes(key), reinterpret_cast<uint8_t*>(stored.data()));
    const std::string value = stored + "\x01payload";
    uint32_t stored_key_size = 0;
    ASSERT_TRUE(scheme().MatchStoredKey(KeyPrefix(), Bytes(key), Bytes(value), &stored_key_size)) << size;
    EXPECT_EQ(stored_key_size, stored.size()) << size;
    const std::string other = key + "x";
    EXPECT_FALSE(scheme().MatchStoredKey(KeyPrefix(), Bytes(other), Bytes(value), &stored_key_size)) << size;
  }
  std::shared_ptr<const MapPlugins> dedup;
  ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("cities", "state", "hashed", {{"value_dedup", "true"}}), &dedup).ok());
  EXPECT_FALSE(dedup->scheme()->StoresValuesAsGiven());
}

// FindKeyedRow learns the stored key's size while proving the row, for the first candidate and for one reached
// after a clash (hash_bits 8: the keys share a hash).
TEST_F(HashedKeyTest, FindKeyedRowKnowsTheStoredKeySizeOfTheRowItProved) {
  Open({{"hash_bits", "8"}});
  const std::vector<std::string> keys = ClashingKeys(3);
  for (const std::string& key : keys) Put(key, "value of " + key);
  for (size_t i = 0; i < keys.size(); ++i) {
    KeySearch search;
    ASSERT_EQ(Find(keys[i], &search), Code::kOk) << keys[i];
    EXPECT_TRUE(search.stored_key_known) << keys[i];
    EXPECT_EQ(search.stored_key_size, scheme().StoredKeySize(search.prefix, Bytes(keys[i]))) << keys[i];
    EXPECT_EQ(StoredKeySizeOf(scheme(), search, Bytes(keys[i])), search.stored_key_size);
    EXPECT_EQ(search.prefix.view().view().substr(1), Clash(static_cast<uint16_t>(i))) << keys[i];
  }
  // A key of the same length as one stored, under the same hash, but other bytes: not proven, not found.
  std::string other = keys[0];
  other.back() = other.back() == 'z' ? 'y' : 'z';
  uint32_t size = 0;
  KeySearch first;
  ASSERT_EQ(Find(keys[0], &first), Code::kOk);
  EXPECT_FALSE(scheme().MatchStoredKey(first.prefix, Bytes(other), Bytes(first.row_value), &size));
}

// In a read-only transaction a lookup renews the table's cursor before it seeks (keyed_search.h): wherever an
// earlier read left the cursor, each key (first candidate or after a clash) is found with the cursor on its row,
// and an absent key of the same hash is a miss.
TEST_F(HashedKeyTest, ReadOnlyLookupsFindEveryKeyWhereverTheCursorWas) {
  Open({{"hash_bits", "8"}});
  std::vector<std::string> keys = ClashingKeys(4);
  const std::string absent = keys.back();  // shares the others' hash: the miss walks past their clash numbers
  keys.pop_back();
  for (const std::string& key : keys) Put(key, "value of " + key);
  Put("Paris", "France");
  ASSERT_TRUE(txn_.Commit().ok());
  ASSERT_TRUE(txn_.Begin(env_, false).ok());
  for (const MDB_cursor_op left_at : {MDB_FIRST, MDB_LAST}) {
    for (const std::string& key : {keys[2], keys[0], std::string("Paris"), keys[1]}) {
      MDB_val k;
      MDB_val v;
      ASSERT_EQ(mdb_cursor_get(table().cursor, &k, &v, left_at), MDB_SUCCESS);
      KeySearch search;
      ASSERT_EQ(Find(key, &search), Code::kOk) << key;
      ASSERT_EQ(mdb_cursor_get(table().cursor, &k, &v, MDB_GET_CURRENT), MDB_SUCCESS) << key;
      EXPECT_EQ(Bytes(k), Bytes(search.row_key)) << key;
      EXPECT_EQ(Bytes(search.row_key), search.prefix.view()) << key;
      EXPECT_EQ(Lookup(key), key == "Paris" ? "France" : "value of " + key);
    }
    KeySearch miss;
    EXPECT_EQ(Find(absent, &miss), Code::kNotFound);
    EXPECT_FALSE(miss.key_found);
    EXPECT_EQ(Lookup(absent), "(miss)");
  }
}

TEST_F(HashedKeyTest, ReadOfAnAbsentKeyIsAMissWithoutMessage) {
  Open();
  Put("Paris", "France");
  KeyPrefix resolved;
  ErrorBuffer error;
  EXPECT_EQ(Resolve("Lyon", Intent::kRead, &resolved, &error), Code::kNotFound);
  EXPECT_EQ(error.message[0], '\0');
}

TEST_F(HashedKeyTest, ResolveAndDecodeRowRoundTrip) {
  Open();
  const std::vector<std::string> keys = {"Paris", "Lyon", "M\xC3\xBCnchen", std::string("nul\0in key", 10),
                                         "\xFF\xFE\x01"};
  for (const std::string& key : keys) Put(key, "value of " + key);

  for (const std::string& key : keys) {
    KeySearch search;
    ASSERT_EQ(Find(key, &search), Code::kOk) << key;
    EXPECT_EQ(search.prefix.view().view(), ExpectedHash(key, 64) + Clash(0));
    EXPECT_EQ(Bytes(search.row_key).view(), search.prefix.view().view());
    Bytes decoded;
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    ErrorBuffer error;
    ASSERT_EQ(scheme().DecodeRow(table(), search.prefix.view(), Bytes(search.row_value), &decoded, &prefix_size,
                                 &stored_key_size, &error),
              Code::kOk)
        << error.message;
    EXPECT_EQ(decoded.view(), key);
    EXPECT_EQ(prefix_size, 10u);
    EXPECT_EQ(stored_key_size, 1 + key.size());  // keys under 128 bytes: a 1-byte length
    // After the stored key: the State head (a 16-byte version, the value type) and value.
    EXPECT_EQ(search.row_value.mv_size, stored_key_size + 17 + ("value of " + key).size());
  }
  EXPECT_EQ(LmdbKeys().size(), keys.size());
}

TEST_F(HashedKeyTest, EmptyKeyIsAnOrdinaryKey) {
  // The scheme stores any key it is given, the empty one included, distinct from a key of one NUL byte.
  // (Loading never gives it one: the XML reader refuses an empty <key> for every map.)
  Open();
  Put("", "empty");
  Put(std::string_view("\0", 1), "nul");
  KeyPrefix resolved;
  ASSERT_EQ(Resolve("", Intent::kRead, &resolved), Code::kOk);
  EXPECT_EQ(resolved.view().view(), ExpectedHash("", 64) + Clash(0));
  LookupKey lookup;
  lookup.key = Bytes(std::string_view(""));
  Row row;
  ErrorBuffer error;
  ASSERT_EQ(plugins_->store()->Get(table(), lookup, &row, &error), Code::kOk) << error.message;
  EXPECT_EQ(row.value.view(), "empty");
  lookup.key = Bytes(std::string_view("\0", 1));
  ASSERT_EQ(plugins_->store()->Get(table(), lookup, &row, &error), Code::kOk) << error.message;
  EXPECT_EQ(row.value.view(), "nul");
  EXPECT_EQ(LmdbKeys().size(), 2u);
}

TEST_F(HashedKeyTest, AcceptsKeysOfAnyLengthAndLargeValues) {
  Open();
  std::vector<std::string> keys;
  for (size_t size : {size_t{1}, size_t{510}, size_t{511}, size_t{512}, size_t{4096}, size_t{100} << 10}) {
    std::string key(size, 'k');
    key.back() = static_cast<char>('0' + size % 10);
    keys.push_back(key);
  }
  const std::string big_value(size_t{1} << 20, 'v');
  for (const std::string& key : keys) Put(key, big_value + std::to_string(key.size()));

  for (const std::string& key : keys) {
    LookupKey lookup;
    lookup.key = Bytes(key);
    Row row;
    ErrorBuffer error;
    ASSERT_EQ(plugins_->store()->Get(table(), lookup, &row, &error), Code::kOk) << key.size();
    EXPECT_EQ(row.value.view(), big_value + std::to_string(key.size()));
  }
  // Every LMDB key is the same 10 bytes whatever the key's length.
  for (const std::string& lmdb_key : LmdbKeys()) EXPECT_EQ(lmdb_key.size(), 10u);
}

TEST_F(HashedKeyTest, ClashingKeysGetClashNumbersInArrivalOrder) {
  Open({{"hash_bits", "8"}});
  const std::vector<std::string> keys = ClashingKeys(4);
  const std::string hash = ExpectedHash(keys[0], 8);
  for (size_t i = 0; i < 3; ++i) Put(keys[i], "v" + std::to_string(i));

  EXPECT_EQ(LmdbKeys(), (std::vector<std::string>{hash + Clash(0), hash + Clash(1), hash + Clash(2)}));
  for (size_t i = 0; i < 3; ++i) {
    KeySearch search;
    ASSERT_EQ(Find(keys[i], &search), Code::kOk) << keys[i];
    EXPECT_EQ(search.prefix.view().view(), hash + Clash(static_cast<uint16_t>(i)));
    EXPECT_EQ(Bytes(search.row_value).view().substr(1, keys[i].size()), keys[i]);
  }
  KeyPrefix resolved;
  EXPECT_EQ(Resolve(keys[3], Intent::kRead, &resolved), Code::kNotFound);
  ASSERT_EQ(Resolve(keys[3], Intent::kWrite, &resolved), Code::kOk);
  EXPECT_EQ(resolved.view().view(), hash + Clash(3));
}

// Deleting a key (a later maintenance issue) leaves a gap in its hash's clash numbers: the keys after it are
// still found and overwritten in place, and a new key never takes a number in use.
TEST_F(HashedKeyTest, AGapInTheClashNumbersIsSkipped) {
  Open({{"hash_bits", "8"}});
  const std::vector<std::string> keys = ClashingKeys(4);
  const std::string hash = ExpectedHash(keys[0], 8);
  Put(keys[0], "a");
  Put(keys[1], "b");
  Put(keys[2], "c");
  DeleteRow(hash + Clash(0));
  EXPECT_EQ(Lookup(keys[0]), "(miss)");
  EXPECT_EQ(Lookup(keys[1]), "b");
  EXPECT_EQ(Lookup(keys[2]), "c");
  Put(keys[1], "b2");  // in place, not a second row at the free clash 0
  EXPECT_EQ(LmdbKeys(), (std::vector<std::string>{hash + Clash(1), hash + Clash(2)}));
  EXPECT_EQ(Lookup(keys[1]), "b2");
  Put(keys[3], "d");
  Put(keys[0], "a2");
  EXPECT_EQ(LmdbKeys(), (std::vector<std::string>{hash + Clash(1), hash + Clash(2), hash + Clash(3), hash + Clash(4)}));
  EXPECT_EQ(Lookup(keys[0]), "a2");
  EXPECT_EQ(Lookup(keys[3]), "d");
}

TEST_F(HashedKeyTest, AGapInTheClashNumbersIsSkippedWithAKeySuffix) {
  Open({{"hash_bits", "8"}}, "temporal");
  const std::vector<std::string> keys = ClashingKeys(3);
  const std::string hash = ExpectedHash(keys[0], 8);
  PutAt(keys[0], 100, "a100");
  PutAt(keys[1], 50, "b50");
  PutAt(keys[1], 200, "b200");
  for (const std::string& lmdb_key : LmdbKeys()) {
    if (lmdb_key.substr(0, 3) == hash + Clash(0)) DeleteRow(lmdb_key);
  }
  EXPECT_EQ(Lookup(keys[0], 150), "(miss)");
  EXPECT_EQ(Lookup(keys[1], 49), "(miss)");
  EXPECT_EQ(Lookup(keys[1], 100), "b50");
  EXPECT_EQ(Lookup(keys[1], 300), "b200");
  PutAt(keys[1], 150, "b150");  // joins the key's rows at clash 1
  PutAt(keys[2], 10, "c10");    // a new key: one past the greatest number in use
  std::vector<std::string> prefixes;
  for (const std::string& lmdb_key : LmdbKeys()) prefixes.push_back(lmdb_key.substr(0, 3));
  EXPECT_EQ(prefixes, (std::vector<std::string>{hash + Clash(1), hash + Clash(1), hash + Clash(1), hash + Clash(2)}));
  EXPECT_EQ(Lookup(keys[1], 175), "b150");
  EXPECT_EQ(Lookup(keys[2], 10), "c10");
}

TEST_F(HashedKeyTest, OverwritingAClashingKeyKeepsItsRow) {
  Open({{"hash_bits", "8"}});
  const std::vector<std::string> keys = ClashingKeys(2);
  Put(keys[0], "a1");
  Put(keys[1], "b1");
  Put(keys[1], "b2");
  Put(keys[0], "a2");
  const std::string hash = ExpectedHash(keys[0], 8);
  EXPECT_EQ(LmdbKeys(), (std::vector<std::string>{hash + Clash(0), hash + Clash(1)}));
  for (const auto& [key, want] : {std::pair{keys[0], "a2"}, std::pair{keys[1], "b2"}}) {
    LookupKey lookup;
    lookup.key = Bytes(key);
    Row row;
    ErrorBuffer error;
    ASSERT_EQ(plugins_->store()->Get(table(), lookup, &row, &error), Code::kOk);
    EXPECT_EQ(row.value.view(), want);
  }
}

TEST_F(HashedKeyTest, WithAKeySuffixSkipsTheOtherRowsOfEachKey) {
  // A store type that appends a suffix (e.g. an effective time) has several rows per key under one prefix.
  Open();
  SchemeInstance scheme;
  ASSERT_TRUE(scheme.Create("hashed", 8, {{"hash_bits", "8"}}).ok());
  const std::vector<std::string> keys = ClashingKeys(3);
  auto write_rows = [&](const std::string& key, int rows) {
    KeyPrefix resolved;
    ErrorBuffer error;
    ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(key), 8, Intent::kWrite, &resolved, &error), Code::kOk);
    for (int i = 0; i < rows; ++i) {
      std::string lmdb_key(resolved.view().view());
      lmdb_key += std::string(7, '\0') + static_cast<char>(i);
      std::string value(scheme->StoredKeySize(KeyPrefix(), Bytes(key)), '\0');
      scheme->WriteStoredKey(KeyPrefix(), Bytes(key), reinterpret_cast<uint8_t*>(value.data()));
      value += "payload" + std::to_string(i);
      MDB_val k{lmdb_key.size(), lmdb_key.data()};
      MDB_val v{value.size(), value.data()};
      ASSERT_EQ(mdb_put(table().txn, table().dbi, &k, &v, 0), MDB_SUCCESS);
    }
  };
  write_rows(keys[0], 3);
  write_rows(keys[1], 2);

  const std::string hash = ExpectedHash(keys[0], 8);
  KeyPrefix resolved;
  ErrorBuffer error;
  ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(keys[1]), 8, Intent::kRead, &resolved, &error), Code::kOk);
  EXPECT_EQ(resolved.view().view(), hash + Clash(1));
  KeySearch search;
  ASSERT_EQ(FindKeyedRow(table(), *scheme, Bytes(keys[1]), Bytes(std::string_view("\0\0\0\0\0\0\0\0", 8)),
                         Seek::kAtOrAfter, Intent::kRead, &search, &error),
            Code::kOk);
  EXPECT_TRUE(Contains(std::string(Bytes(search.row_value).view()), "payload0"));
  ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(keys[2]), 8, Intent::kRead, &resolved, &error), Code::kNotFound);
  ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(keys[2]), 8, Intent::kWrite, &resolved, &error), Code::kOk);
  EXPECT_EQ(resolved.view().view(), hash + Clash(2));

  // DecodeRow splits key and value at the prefix and stored key.
  const std::string lmdb_key = hash + Clash(1) + std::string(7, '\0') + '\1';
  MDB_val k{lmdb_key.size(), const_cast<char*>(lmdb_key.data())};
  MDB_val v;
  ASSERT_EQ(mdb_get(table().txn, table().dbi, &k, &v), MDB_SUCCESS);
  Bytes key;
  uint32_t prefix_size = 0;
  uint32_t stored_key_size = 0;
  ASSERT_EQ(scheme->DecodeRow(table(), Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, &error), Code::kOk);
  EXPECT_EQ(key.view(), keys[1]);
  EXPECT_EQ(prefix_size, 3u);
  EXPECT_EQ(Bytes(v).view().substr(stored_key_size), "payload1");
}

TEST_F(HashedKeyTest, DecodeRowRefusesCorruptRows) {
  Open();
  Bytes key;
  uint32_t prefix_size = 0;
  uint32_t stored_key_size = 0;
  ErrorBuffer error;
  const std::string good_key(10, 'h');
  EXPECT_EQ(scheme().DecodeRow(table(), Bytes(std::string_view("short")), Bytes(std::string_view("\0", 1)), &key,
                               &prefix_size, &stored_key_size, &error),
            Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "shorter than its 10-byte prefix")) << error.message;

  // Key lengths that are no varint: none at all, cut off, not in the shortest form, past 32 bits, too long.
  // (Every shortest form of six bytes is past 32 bits too; the last case is refused as either.)
  for (const std::string& bad :
       {std::string(), std::string("\x80"), std::string("\xFF\xFF\xFF\xFF"), std::string("\x80\x00", 2),
        std::string("\x80\x80\x00", 3), std::string("\xFF\xFF\xFF\xFF\x00", 5), std::string("\xFF\xFF\xFF\xFF\x1F"),
        std::string("\x80\x80\x80\x80\x80\x01")}) {
    error = ErrorBuffer();
    EXPECT_EQ(scheme().DecodeRow(table(), Bytes(good_key), Bytes(bad), &key, &prefix_size, &stored_key_size, &error),
              Code::kCorruption)
        << bad.size();
    EXPECT_TRUE(Contains(error.message, "does not start with a valid key length")) << error.message;
  }

  // A length past the value's end.
  error = ErrorBuffer();
  EXPECT_EQ(scheme().DecodeRow(table(), Bytes(good_key), Bytes(std::string_view("\x09"
                                                                                  "abc")),
                               &key, &prefix_size, &stored_key_size, &error),
            Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "too short for its 9-byte stored key")) << error.message;

  // Lengths of three to five bytes are read in full (the largest, 2^32 - 1, included), then found too long.
  for (const auto& [length, bytes] : std::vector<std::pair<uint64_t, std::string>>{
           {(uint64_t{1} << 21) - 1, "\xFF\xFF\x7F"},
           {uint64_t{1} << 21, "\x80\x80\x80\x01"},
           {uint64_t{1} << 28, "\x80\x80\x80\x80\x01"},
           {(uint64_t{1} << 32) - 1, "\xFF\xFF\xFF\xFF\x0F"}}) {
    error = ErrorBuffer();
    EXPECT_EQ(scheme().DecodeRow(table(), Bytes(good_key), Bytes(bytes + "abc"), &key, &prefix_size, &stored_key_size,
                                 &error),
              Code::kCorruption);
    EXPECT_TRUE(Contains(error.message, "too short for its " + std::to_string(length) + "-byte stored key"))
        << error.message;
  }

  // A row whose stored key is corrupt never matches a lookup.
  EXPECT_FALSE(scheme().RowHasKey(Bytes(std::string_view("")), Bytes(std::string_view(""))));
  EXPECT_FALSE(scheme().RowHasKey(Bytes(std::string_view("")), Bytes(std::string_view("\x80\x00", 2))));
  // The byte past the view is the key's last: only the size check tells the row from the key.
  EXPECT_FALSE(scheme().RowHasKey(Bytes(std::string_view("abc")), Bytes(std::string_view("\x03" "abc", 3))));
  EXPECT_TRUE(scheme().RowHasKey(Bytes(std::string_view("abc")), Bytes(std::string_view("\x03" "abc"))));
  EXPECT_TRUE(scheme().RowHasKey(Bytes(std::string_view("")), Bytes(std::string_view("\0", 1))));
  EXPECT_FALSE(scheme().RowHasKey(Bytes(std::string_view("ab")), Bytes(std::string_view("\x03" "abc"))));
}

}  // namespace
}  // namespace planb
