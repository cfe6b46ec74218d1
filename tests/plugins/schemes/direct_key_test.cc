// The `direct` key scheme, loaded through the real registry and used on real LMDB tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/ingest/staging_store.h"
#include "planb/key_scheme.h"
#include "planb/keyed_search.h"
#include "planb/keyed_search.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ReferenceXml;
using ::planb::testing::SchemeInstance;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

class DirectKeyTest : public ::testing::Test {
 protected:
  // A State map "cities" with the direct scheme in a fresh LMDB, with a write transaction open.
  void SetUp() override {
    Status s = CreateMapPlugins(MakeMapConfig("cities", "state", "direct"), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = CreateMapEnv(dir_ / "map", plugins_, &env_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = txn_.Begin(env_, true);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  const KeyScheme& scheme() const { return *plugins_->scheme(); }
  const Table& table() const { return txn_.table(); }

  Code Put(std::string_view key, std::string_view value, ErrorBuffer* error) {
    return plugins_->store()->Put(table(), StateRecord(key, value), error);
  }

  Code Get(std::string_view key, std::string* value) {
    LookupKey lookup;
    lookup.key = Bytes(key);
    Row row;
    ErrorBuffer error;
    Code code = plugins_->store()->Get(table(), lookup, &row, &error);
    if (code == Code::kOk) *value = std::string(row.value.view());
    return code;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  std::shared_ptr<MapEnv> env_;
  MapTxn txn_;
};

TEST_F(DirectKeyTest, LayoutSaysWhetherKeysAreLengthPrefixed) {
  EXPECT_EQ(scheme().Layout().view(), "raw");
  SchemeInstance with_suffix;
  ASSERT_TRUE(with_suffix.Create("direct", 8).ok());
  EXPECT_EQ(with_suffix->Layout().view(), "length_prefixed");
}

TEST_F(DirectKeyTest, PrefixIsTheKeyBytesAndNothingIsStoredInTheValue) {
  const std::string key("a\0b\xFF", 4);
  KeyPrefix resolved;
  ErrorBuffer error;
  ASSERT_EQ(ResolveKey(table(), scheme(), Bytes(key), 0, Intent::kWrite, &resolved, &error), Code::kOk);
  EXPECT_EQ(resolved.view().view(), key);
  EXPECT_EQ(scheme().StoredKeySize(KeyPrefix(), Bytes(key)), 0u);
  // The prefix is certain: a read knows it without finding a row, rows may or may not exist.
  Candidate candidate;
  ASSERT_EQ(scheme().FirstCandidate(table(), Bytes(key), Intent::kRead, &candidate, &error), Code::kOk);
  EXPECT_TRUE(candidate.certain);
  EXPECT_EQ(candidate.prefix.view().view(), key);
  std::string value;
  EXPECT_EQ(Get(key, &value), Code::kNotFound);
}

TEST_F(DirectKeyTest, ResolveAndDecodeRowRoundTrip) {
  const std::vector<std::string> keys = {"Paris", "M\xC3\xBCnchen", std::string("nul\0in key", 10), "\xFF",
                                         std::string(511, 'x')};
  for (const std::string& key : keys) {
    ErrorBuffer error;
    ASSERT_EQ(Put(key, "value of " + key.substr(0, 8), &error), Code::kOk) << error.message;
  }
  size_t rows = 0;
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(table().cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(table().cursor, &k, &v, MDB_NEXT), ++rows) {
    Bytes key;
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 7;
    ErrorBuffer error;
    ASSERT_EQ(scheme().DecodeRow(table(), Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, &error), Code::kOk);
    EXPECT_EQ(key.view(), Bytes(k).view());  // the LMDB key is the key
    EXPECT_EQ(prefix_size, k.mv_size);
    EXPECT_EQ(stored_key_size, 0u);
    std::string value;
    ASSERT_EQ(Get(key.view(), &value), Code::kOk);
    EXPECT_EQ(value, "value of " + std::string(key.view().substr(0, 8)));
  }
  EXPECT_EQ(rows, keys.size());

  // A certain candidate needs no proof: the search leaves the stored key's size to StoredKeySize (0 here).
  KeySearch search;
  ErrorBuffer error;
  ASSERT_EQ(FindKeyedRow(table(), scheme(), Bytes(keys[0]), Bytes(), Seek::kExact, Intent::kRead, &search, &error),
            Code::kOk);
  EXPECT_FALSE(search.stored_key_known);
  EXPECT_EQ(StoredKeySizeOf(scheme(), search, Bytes(keys[0])), 0u);
  // That search is one mdb_get, which hands back the key it was given: the row's key must then be a copy in the
  // KeySearch (valid while it is), not the search's own buffer, gone when FindKeyedRow returns.
  const auto* row_key = static_cast<const uint8_t*>(search.row_key.mv_data);
  EXPECT_TRUE(row_key >= search.prefix.bytes && row_key < search.prefix.bytes + sizeof(search.prefix.bytes));
  EXPECT_EQ(Bytes(search.row_key).view(), keys[0]);
}

TEST_F(DirectKeyTest, AnEmptyKeyCannotBeWrittenAndIsAbsentWhenRead) {
  KeyPrefix resolved;
  ErrorBuffer error;
  EXPECT_EQ(ResolveKey(table(), scheme(), Bytes(std::string_view("")), 0, Intent::kWrite, &resolved, &error),
            Code::kInvalidArgument);
  EXPECT_THAT(std::string(error.message), ::testing::EndsWith("): KeyScheme::FirstCandidate: empty key"));
  // A key that could never be stored is a miss, with no message built.
  error = ErrorBuffer();
  EXPECT_EQ(ResolveKey(table(), scheme(), Bytes(std::string_view("")), 0, Intent::kRead, &resolved, &error), Code::kNotFound);
  EXPECT_STREQ(error.message, "");
  std::string value;
  EXPECT_EQ(Get("", &value), Code::kNotFound);

  // Through the State store: refused, nothing written.
  EXPECT_EQ(Put("", "v", &error), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(error.message, "empty key")) << error.message;
  MDB_val k;
  MDB_val v;
  EXPECT_EQ(mdb_cursor_get(table().cursor, &k, &v, MDB_FIRST), MDB_NOTFOUND);
}

TEST_F(DirectKeyTest, RefusesToWriteA512ByteKeyNamingTheLength) {
  const std::string key(512, 'k');
  KeyPrefix resolved;
  ErrorBuffer error;
  EXPECT_EQ(ResolveKey(table(), scheme(), Bytes(key), 0, Intent::kWrite, &resolved, &error), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(error.message, "key of 512 bytes")) << error.message;
  EXPECT_TRUE(Contains(error.message, "at most 511 bytes")) << error.message;
  EXPECT_TRUE(Contains(error.message, "scheme = hashed")) << error.message;

  error = ErrorBuffer();
  EXPECT_EQ(Put(std::string(100 << 10, 'k'), "v", &error), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(error.message, "key of 102400 bytes")) << error.message;

  // Reading one is a miss without a message.
  error = ErrorBuffer();
  EXPECT_EQ(ResolveKey(table(), scheme(), Bytes(key), 0, Intent::kRead, &resolved, &error), Code::kNotFound);
  EXPECT_STREQ(error.message, "");
  std::string value;
  EXPECT_EQ(Get(key, &value), Code::kNotFound);
}

TEST(DirectKey, LoadingAKeyItCannotStoreNamesTheMapTheLengthAndThePlace) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), StateMapSection("cities", "direct"), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  LoadOptions options;
  options.effective_time_ms = 0;
  const std::string file = dir / "input.xml";
  WriteFile(file, ReferenceXml("cities", {{"fine", "1"}, {std::string(512, 'k'), "2"}}));
  LoadReport report;
  s = RunLoad(*runtime, {file}, options, &report);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "input.xml:4:")) << s.message();  // line 1 is the XML declaration
  EXPECT_TRUE(Contains(s.message(), "map cities: scheme 'direct' (")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "KeyScheme::FirstCandidate: key of 512 bytes")) << s.message();
  // (An empty <key> never reaches a scheme: the reader refuses it for every map.)

  // Nothing was staged or merged, not even the good record before it.
  std::shared_ptr<MapEnv> shard;
  EXPECT_EQ(runtime->OpenShard("cities", &shard).code(), Code::kNotFound);
  EXPECT_TRUE(std::filesystem::is_empty(runtime->home().writer()));
  std::vector<StagedBatch> staged;
  ASSERT_TRUE(StagingStore(runtime->home()).List(&staged).ok());
  EXPECT_TRUE(staged.empty());
}

TEST_F(DirectKeyTest, Accepts511ByteKeysWhichLmdbStores) {
  const std::string key(511, 'k');
  ErrorBuffer error;
  ASSERT_EQ(Put(key, "longest", &error), Code::kOk) << error.message;
  std::string value;
  ASSERT_EQ(Get(key, &value), Code::kOk);
  EXPECT_EQ(value, "longest");
  EXPECT_EQ(mdb_env_get_maxkeysize(env_->env()), static_cast<int>(kMaxLmdbKeySize));
}

TEST_F(DirectKeyTest, StoresLargeValues) {
  const std::string big(size_t{1} << 20, 'v');
  ErrorBuffer error;
  ASSERT_EQ(Put("big", big, &error), Code::kOk) << error.message;
  std::string value;
  ASSERT_EQ(Get("big", &value), Code::kOk);
  EXPECT_EQ(value, big);
}

TEST_F(DirectKeyTest, WithAKeySuffixPrefixesTheLength) {
  SchemeInstance scheme;
  ASSERT_TRUE(scheme.Create("direct", 8, {}, "events").ok());
  KeyPrefix resolved;
  ErrorBuffer error;
  ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(std::string_view("abc")), 8, Intent::kWrite, &resolved, &error), Code::kOk);
  EXPECT_EQ(resolved.view().view(), std::string("\0\3abc", 5));

  // 511 - 8 (suffix) - 2 (length) = 501 bytes at most.
  const std::string longest(501, 'k');
  ASSERT_EQ(ResolveKey(table(), *scheme, Bytes(longest), 8, Intent::kWrite, &resolved, &error), Code::kOk);
  EXPECT_EQ(resolved.size, 503u);
  EXPECT_EQ(ResolveKey(table(), *scheme, Bytes(std::string(502, 'k')), 8, Intent::kWrite, &resolved, &error),
            Code::kInvalidArgument);
  EXPECT_TRUE(Contains(error.message, "key of 502 bytes")) << error.message;
  EXPECT_TRUE(Contains(error.message, "at most 501 bytes")) << error.message;

  // A row of key "ab" + suffix decodes to "ab", not to "ab" plus suffix bytes.
  const std::string lmdb_key = std::string("\0\2ab", 4) + std::string("\0\0\0\0\0\0\0\x07", 8);
  Bytes key;
  uint32_t prefix_size = 0;
  uint32_t stored_key_size = 9;
  ASSERT_EQ(scheme->DecodeRow(table(), Bytes(lmdb_key), Bytes(std::string_view("payload")), &key, &prefix_size,
                              &stored_key_size, &error),
            Code::kOk);
  EXPECT_EQ(key.view(), "ab");
  EXPECT_EQ(prefix_size, 4u);
  EXPECT_EQ(stored_key_size, 0u);

  // A length prefix longer than the row is corruption.
  error = ErrorBuffer();
  EXPECT_EQ(scheme->DecodeRow(table(),
                              Bytes(std::string_view("\0\x10"
                                                     "ab",
                                                     4)),
                              Bytes(), &key, &prefix_size, &stored_key_size, &error),
            Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "shorter than its length prefix")) << error.message;
  EXPECT_EQ(scheme->DecodeRow(table(), Bytes(std::string_view("\0", 1)), Bytes(), &key, &prefix_size, &stored_key_size,
                              &error),
            Code::kCorruption);
}

}  // namespace
}  // namespace planb
