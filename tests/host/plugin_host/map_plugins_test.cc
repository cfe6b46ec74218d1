#include "host/plugin_host/map_plugins.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "support/map_fixture.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::LoadBuiltInPlugins;
using ::planb::testing::MakeMapConfig;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

class MapPluginsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = LoadBuiltInPlugins(&registry_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  Status Create(const MapConfig& config, std::unique_ptr<MapPlugins>* out) {
    return MapPlugins::Create(config, registry_, out);
  }

  // The message of creating `config`, which must fail with `code`.
  std::string ErrorOf(const MapConfig& config, Code code = Code::kInvalidArgument) {
    std::unique_ptr<MapPlugins> plugins;
    const Status s = Create(config, &plugins);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_EQ(plugins, nullptr);
    return s.message();
  }

  // A map "m" of `type` over the throwing_scheme fixture with `throw_in`, in a fresh LMDB with a write
  // transaction open (`txn`), for the guard's checks of a faulty scheme's answers.
  struct FaultyMap {
    std::shared_ptr<const MapPlugins> plugins;
    testing::TempDir dir;
    std::shared_ptr<MapEnv> env;
    testing::MapTxn txn;
  };
  // REQUIRES: the throwing_scheme fixture's directory is loaded.
  void OpenFaultyMap(const std::string& type, const std::string& throw_in, FaultyMap* out) {
    std::unique_ptr<MapPlugins> made;
    Status s = Create(MakeMapConfig("m", type, "throwing_scheme", {{"throw_in", throw_in}}), &made);
    ASSERT_TRUE(s.ok()) << s.message();
    out->plugins = std::move(made);
    s = testing::CreateMapEnv(out->dir / "m", out->plugins, &out->env);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(out->txn.Begin(out->env, true).ok());
  }

  PluginRegistry registry_;
};

TEST_F(MapPluginsTest, DefaultSchemeIsHashedWith64Bits) {
  std::unique_ptr<MapPlugins> plugins;
  const Status s = Create(MakeMapConfig("cities", "state", ""), &plugins);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_NE(plugins->scheme_descriptor(), nullptr);
  EXPECT_STREQ(plugins->scheme_descriptor()->name, "hashed");
  EXPECT_STREQ(plugins->type_descriptor().name, "state");
  ASSERT_NE(plugins->scheme(), nullptr);
  ASSERT_NE(plugins->store(), nullptr);
  EXPECT_EQ(plugins->scheme()->Layout().view(), "hash_bits=64");
  EXPECT_EQ(plugins->config().name, "cities");
}

TEST_F(MapPluginsTest, PassesDeclaredOptionsToTheScheme) {
  std::unique_ptr<MapPlugins> plugins;
  const Status s = Create(MakeMapConfig("m", "state", "hashed", {{"hash_bits", "8"}}), &plugins);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(plugins->scheme()->Layout().view(), "hash_bits=8");
}

TEST_F(MapPluginsTest, DirectSchemeOnState) {
  std::unique_ptr<MapPlugins> plugins;
  const Status s = Create(MakeMapConfig("m", "state", "direct"), &plugins);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_STREQ(plugins->scheme_descriptor()->name, "direct");
  EXPECT_EQ(plugins->scheme()->Layout().view(), "raw");  // State appends no suffix
}

TEST_F(MapPluginsTest, RefusesRetentionAndCondensationOnTypesWithoutTime) {
  for (const char* type : {"state", "ranged"}) {
    MapConfig retain = MakeMapConfig("m", type, "");
    retain.retain = true;
    retain.retain_for_ms = 1000;
    EXPECT_EQ(ErrorOf(retain), std::string("[map.m]: retain_for: type '") + type +
                                   "' has no time on its rows, so nothing can age out (remove retain_for)");
    MapConfig condense = MakeMapConfig("m", type, "");
    condense.condense = true;
    EXPECT_EQ(ErrorOf(condense), std::string("[map.m]: condense: type '") + type +
                                     "' has nothing to condense (only temporal types and sessions do; remove condense)");
  }
  for (const char* type : {"temporal", "temporal_ranged", "session"}) {
    MapConfig both = MakeMapConfig("m", type, "");
    both.retain = true;
    both.retain_for_ms = 1000;
    both.condense = true;
    std::unique_ptr<MapPlugins> plugins;
    const Status s = Create(both, &plugins);
    EXPECT_TRUE(s.ok()) << type << ": " << s.message();
  }
}

TEST_F(MapPluginsTest, RefusesAnUnknownOptionNamingIt) {
  const std::string message = ErrorOf(MakeMapConfig("m", "state", "hashed", {{"hash_bitz", "8"}}));
  EXPECT_TRUE(Contains(message, "[map.m]")) << message;
  EXPECT_TRUE(Contains(message, "unknown key 'hash_bitz'")) << message;
  EXPECT_TRUE(Contains(message, "hash_bits")) << message;  // what would have been accepted
}

TEST_F(MapPluginsTest, RefusesAnOptionOfAnotherScheme) {
  const std::string message = ErrorOf(MakeMapConfig("m", "state", "direct", {{"hash_bits", "8"}}));
  EXPECT_TRUE(Contains(message, "unknown key 'hash_bits'")) << message;
  EXPECT_TRUE(Contains(message, "scheme 'direct'")) << message;
  EXPECT_TRUE(Contains(message, "take: value_dedup")) << message;  // direct's only option
}

TEST_F(MapPluginsTest, RefusesHashBitsOutOfRange) {
  for (const char* bad : {"4", "7", "65", "0", "-8"}) {
    const std::string message = ErrorOf(MakeMapConfig("m", "state", "hashed", {{"hash_bits", bad}}));
    EXPECT_TRUE(Contains(message, "[map.m]")) << message;
    EXPECT_TRUE(Contains(message, std::string("hash_bits: '") + bad + "' is not a whole number from 8 to 64"))
        << message;
  }
}

TEST_F(MapPluginsTest, RefusesHashBitsThatAreNotANumber) {
  for (const char* bad : {"abc", "", "8x", "8.0", "0x10", "99999999999999999999999"}) {
    const std::string message = ErrorOf(MakeMapConfig("m", "state", "hashed", {{"hash_bits", bad}}));
    EXPECT_TRUE(Contains(message, std::string("hash_bits: '") + bad + "'")) << message;
  }
}

TEST_F(MapPluginsTest, AcceptsHashBitsAtTheLimits) {
  for (const char* good : {"8", "13", "64"}) {
    std::unique_ptr<MapPlugins> plugins;
    const Status s = Create(MakeMapConfig("m", "state", "hashed", {{"hash_bits", good}}), &plugins);
    ASSERT_TRUE(s.ok()) << good << ": " << s.message();
    EXPECT_EQ(plugins->scheme()->Layout().view(), std::string("hash_bits=") + good);
  }
}

TEST_F(MapPluginsTest, HybridRecordsItsOptionsAndTheStoreTypesLimit) {
  std::unique_ptr<MapPlugins> plugins;
  ASSERT_TRUE(Create(MakeMapConfig("m", "state", "hybrid"), &plugins).ok());
  EXPECT_EQ(plugins->scheme()->Layout().view(), "direct_max=510,hash_bits=64,raw");
  ASSERT_TRUE(Create(MakeMapConfig("m", "session", "hybrid", {{"direct_max", "492"}, {"hash_bits", "8"}}), &plugins)
                  .ok());
  EXPECT_EQ(plugins->scheme()->Layout().view(), "direct_max=492,hash_bits=8,length_prefixed");
}

TEST_F(MapPluginsTest, HybridRefusesEachMalformedOptionNamingMapAndOption) {
  const struct {
    const char* type;
    const char* option;
    const char* value;
    const char* expected;
  } kBad[] = {
      {"state", "direct_max", "abc", "direct_max: 'abc' is not a whole number from 0 to 510"},
      {"state", "direct_max", "", "direct_max: '' is not a whole number from 0 to 510"},
      {"state", "direct_max", "-1", "direct_max: '-1' is not a whole number from 0 to 510"},
      {"state", "direct_max", "511", "direct_max: '511' is not a whole number from 0 to 510"},
      {"temporal", "direct_max", "501", "direct_max: '501' is not a whole number from 0 to 500"},
      {"session", "direct_max", "493", "direct_max: '493' is not a whole number from 0 to 492"},
      {"state", "hash_bits", "7", "hash_bits: '7' is not a whole number from 8 to 64"},
      {"state", "hash_bits", "8x", "hash_bits: '8x' is not a whole number from 8 to 64"},
  };
  for (const auto& bad : kBad) {
    const std::string message = ErrorOf(MakeMapConfig("m", bad.type, "hybrid", {{bad.option, bad.value}}));
    EXPECT_TRUE(Contains(message, "[map.m]")) << message;
    EXPECT_TRUE(Contains(message, bad.expected)) << message;
  }
}

TEST_F(MapPluginsTest, LookupTableAndVariableRecordTheirOptions) {
  std::unique_ptr<MapPlugins> plugins;
  ASSERT_TRUE(Create(MakeMapConfig("m", "state", "lookup_table", {{"hash_bits", "8"}}), &plugins).ok());
  EXPECT_EQ(plugins->scheme()->Layout().view(), "hash_bits=8,id_bytes=4");
  ASSERT_TRUE(Create(MakeMapConfig("m", "temporal", "variable"), &plugins).ok());
  EXPECT_EQ(plugins->scheme()->Layout().view(), "direct_max=32,id_max=511,hash_bits=64,id_bytes=4,length_prefixed");
}

TEST_F(MapPluginsTest, LookupTableAndVariableRefuseEachMalformedOption) {
  const struct {
    const char* scheme;
    const char* type;
    const char* option;
    const char* value;
    const char* expected;
  } kBad[] = {
      {"lookup_table", "state", "hash_bits", "65", "hash_bits: '65' is not a whole number from 8 to 64"},
      {"lookup_table", "state", "hash_bits", "x", "hash_bits: 'x' is not a whole number from 8 to 64"},
      {"variable", "state", "direct_max", "ten", "direct_max: 'ten' is not a whole number from 0 to 510"},
      {"variable", "session", "direct_max", "493", "direct_max: '493' is not a whole number from 0 to 492"},
      {"variable", "temporal", "direct_max", "32.5", "direct_max: '32.5' is not a whole number from 0 to 500"},
      {"variable", "state", "hash_bits", "0", "hash_bits: '0' is not a whole number from 8 to 64"},
  };
  for (const auto& bad : kBad) {
    const std::string message = ErrorOf(MakeMapConfig("m", bad.type, bad.scheme, {{bad.option, bad.value}}));
    EXPECT_TRUE(Contains(message, "[map.m]")) << message;
    EXPECT_TRUE(Contains(message, bad.expected)) << message;
  }
  EXPECT_TRUE(Contains(ErrorOf(MakeMapConfig("m", "state", "lookup_table", {{"direct_max", "4"}})),
                       "unknown key 'direct_max'"));
}

TEST_F(MapPluginsTest, RefusesAnUnknownTypeListingTheKnownOnes) {
  const std::string message = ErrorOf(MakeMapConfig("m", "sketch", ""), Code::kNotSupported);
  EXPECT_TRUE(Contains(message, "[map.m]")) << message;
  EXPECT_TRUE(Contains(message, "unknown type 'sketch' (known: histogram, metric, ranged, session, state, temporal_ranged, temporal)"))
      << message;
}

TEST_F(MapPluginsTest, RefusesAnUnknownSchemeListingTheKnownOnes) {
  const std::string message = ErrorOf(MakeMapConfig("m", "state", "sorted"), Code::kNotSupported);
  EXPECT_TRUE(Contains(message, "unknown scheme 'sorted'")) << message;
  EXPECT_TRUE(Contains(message, "hashed")) << message;
  EXPECT_TRUE(Contains(message, "direct")) << message;
}

// A store type whose 505-byte key suffix leaves hashed, hybrid and variable no room for their prefixes: the
// error names the map, the scheme and why, and lists the schemes that can serve the type.
TEST_F(MapPluginsTest, ASchemeThatCannotServeTheStoreTypeSaysWhichWould) {
  ASSERT_TRUE(registry_.LoadDirectories({PLANB_FIXTURE_DIR "/wide_suffix"}).ok());
  for (const char* scheme : {"hashed", "hybrid", "variable"}) {
    const std::string message = ErrorOf(MakeMapConfig("wide", "wide_suffix", scheme));
    EXPECT_TRUE(Contains(message, std::string("[map.wide]: scheme '") + scheme + "': cannot serve a store type that "
                                  "appends 505 bytes to each key")) << message;
    EXPECT_TRUE(Contains(message, "; schemes that can serve type 'wide_suffix': direct, lookup_table")) << message;
  }
  // hash_bits = 8 leaves hashed 3 bytes of prefix: room enough, so the scheme is created and the fixture's
  // own refusal to make a store is what fails.
  const std::string fits = ErrorOf(MakeMapConfig("wide", "wide_suffix", "hashed", {{"hash_bits", "8"}}));
  EXPECT_TRUE(Contains(fits, "type 'wide_suffix': wide_suffix is a test fixture")) << fits;
  // An option's own error lists nothing more: the scheme can serve the type with other options.
  const std::string option = ErrorOf(MakeMapConfig("m", "state", "hashed", {{"hash_bits", "99"}}));
  EXPECT_FALSE(Contains(option, "schemes that can serve")) << option;
}

TEST_F(MapPluginsTest, OutlivesTheRegistryItWasMadeFrom) {
  std::unique_ptr<MapPlugins> plugins;
  {
    PluginRegistry registry;
    ASSERT_TRUE(LoadBuiltInPlugins(&registry).ok());
    ASSERT_TRUE(
        MapPlugins::Create(MakeMapConfig("m", "state", "hashed", {{"hash_bits", "16"}}), registry, &plugins).ok());
  }
  registry_ = PluginRegistry();  // drop the fixture's references too: only MapPlugins holds the libraries
  // Calls into both plugins' code still work.
  EXPECT_EQ(plugins->scheme()->Layout().view(), "hash_bits=16");
  EXPECT_EQ(plugins->scheme()->StoredKeySize(KeyPrefix(), Bytes(std::string_view("abc"))), 4u);
}

// The host hands create every option a plugin declares: the config's value, else the declared default. The
// throwing_scheme fixture's layout says whether it received throw_in ("length") or not ("length,no_throw_in").
TEST_F(MapPluginsTest, HandsEachPluginTheDefaultsOfTheOptionsTheConfigLeavesOut) {
  ASSERT_TRUE(registry_.LoadDirectories({PLANB_FIXTURE_DIR "/throwing_scheme"}).ok());
  std::unique_ptr<MapPlugins> plugins;
  Status s = Create(MakeMapConfig("m", "state", "throwing_scheme"), &plugins);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(plugins->scheme()->Layout().view(), "length");  // the declared default ("none") came
  s = Create(MakeMapConfig("m", "state", "throwing_scheme", {{"throw_in", "StoredKeySize"}}), &plugins);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(plugins->scheme()->StoredKeySize(KeyPrefix(), Bytes(std::string_view("abc"))), 0u);  // the value came
}

// A scheme's exception in a call without an error channel (RowHasKey) made through the adapter the store type
// holds: the adapter returns a safe value and the guarded store's call fails naming the scheme and the call.
TEST_F(MapPluginsTest, ASchemeThrowingUnderTheStoreTypeFailsTheStoreCallNamingTheScheme) {
  ASSERT_TRUE(registry_.LoadDirectories({PLANB_FIXTURE_DIR "/throwing_scheme"}).ok());
  std::unique_ptr<MapPlugins> plugins;
  ASSERT_TRUE(Create(MakeMapConfig("m", "state", "throwing_scheme", {{"throw_in", "StoredKeySize"}}), &plugins).ok());
  EXPECT_EQ(plugins->scheme()->StoredKeySize(KeyPrefix(), Bytes(std::string_view("abc"))), 0u);  // safe value
  const auto* guarded = static_cast<const GuardedScheme*>(plugins->scheme());
  EXPECT_TRUE(guarded->failed());
  ErrorBuffer error;
  EXPECT_EQ(guarded->TakeFailure(&error), Code::kInternal);
  EXPECT_TRUE(Contains(error.message, "scheme 'throwing_scheme' (" PLANB_FIXTURE_DIR
                                      "/throwing_scheme/libplanb_throwing_scheme.so): KeyScheme::StoredKeySize threw: "
                                      "injected failure in StoredKeySize")) << error.message;
}

// A faulty scheme's DecodeRow reporting a prefix or a stored key of 2^32 - 1 bytes (throwing_scheme's
// DecodeRow:oversize_*): the host's guard refuses the answer, naming the scheme and the sizes, before State,
// Temporal State or Session reads the row by it (as a store decodes a row, and deletes one). Without the check, the
// stores' 32-bit bounds let a stored key size + 1 wrap round to 0 and read 4 GiB past the row; the SDK's helpers
// count in 64 bits now too (tested without the guard in state_store_test.cc).
TEST_F(MapPluginsTest, TheGuardRefusesRowSizesPastTheRowFromAFaultyScheme) {
  ASSERT_TRUE(registry_.LoadDirectories({PLANB_FIXTURE_DIR "/throwing_scheme"}).ok());
  const testing::TemporalEvent temporal{"key", 5, "value"};
  const testing::SessionEvent session{"key", 5, 1000};
  const std::string label =
      "scheme 'throwing_scheme' (" PLANB_FIXTURE_DIR "/throwing_scheme/libplanb_throwing_scheme.so): ";
  for (const std::string type : {"state", "temporal", "session"}) {
    for (const bool prefix : {true, false}) {
      SCOPED_TRACE(type + (prefix ? " prefix" : " stored key"));
      FaultyMap map;
      OpenFaultyMap(type, prefix ? "DecodeRow:oversize_prefix" : "DecodeRow:oversize_stored_key", &map);
      if (HasFatalFailure()) return;
      const std::shared_ptr<const MapPlugins>& plugins = map.plugins;
      testing::MapTxn& txn = map.txn;
      const Record record = type == "state"      ? testing::StateRecord("key", "value")
                            : type == "temporal" ? testing::ToRecord(temporal)
                                                 : testing::ToRecord(session);
      ErrorBuffer error;
      ASSERT_EQ(plugins->store()->Put(txn.table(), record, &error), Code::kOk) << error.message;
      MDB_val k;
      MDB_val v;
      ASSERT_EQ(mdb_cursor_get(txn.table().cursor, &k, &v, MDB_FIRST), MDB_SUCCESS);
      const std::string sizes =
          prefix ? "reported a 4294967295-byte prefix and a " : "-byte prefix and a 4294967295-byte stored key";
      Row row;
      EXPECT_EQ(plugins->store()->DecodeRow(txn.table(), Bytes(k), Bytes(v), &row, &error), Code::kInternal);
      EXPECT_TRUE(Contains(error.message, label + "KeyScheme::DecodeRow reported a ")) << error.message;
      EXPECT_TRUE(Contains(error.message, sizes)) << error.message;
      if (type != "session") {  // Session rows hold no value: deleting one decodes nothing
        error = ErrorBuffer();
        EXPECT_EQ(plugins->store()->DeleteRow(txn.table(), Bytes(k), Bytes(v), &error), Code::kInternal);
        EXPECT_TRUE(Contains(error.message, sizes)) << error.message;
        EXPECT_EQ(mdb_cursor_get(txn.table().cursor, &k, &v, MDB_FIRST), MDB_SUCCESS);  // the row is still there
      }
    }
  }
}

// Likewise for a faulty merge plan's PlaceRow (throwing_scheme's PlaceRow:oversize): the guarded plan refuses a
// prefix past the batch row's key, naming the scheme.
TEST_F(MapPluginsTest, TheGuardRefusesAPlacedPrefixPastTheRow) {
  ASSERT_TRUE(registry_.LoadDirectories({PLANB_FIXTURE_DIR "/throwing_scheme"}).ok());
  FaultyMap map;
  OpenFaultyMap("state", "PlaceRow:oversize", &map);
  if (HasFatalFailure()) return;
  ErrorBuffer error;
  MergePlan* plan = nullptr;
  ASSERT_EQ(map.plugins->scheme()->PlanMerge(map.txn.table(), map.txn.table(), &plan, &error), Code::kOk)
      << error.message;
  ASSERT_NE(plan, nullptr);
  PlacedRow placed;
  EXPECT_EQ(plan->PlaceRow(Bytes(std::string_view("0123456789")), Bytes(std::string_view("value")), &placed, &error),
            Code::kInternal);
  EXPECT_TRUE(Contains(error.message, "scheme 'throwing_scheme' (" PLANB_FIXTURE_DIR
                                      "/throwing_scheme/libplanb_throwing_scheme.so): MergePlan::PlaceRow reported a "
                                      "4294967295-byte prefix and a 0-byte stored key for a row of a 10-byte key and "
                                      "a 5-byte value"))
      << error.message;
  plan->Destroy();
}

// A prefix longer than LMDB's keys from FirstCandidate (throwing_scheme's FirstCandidate:oversize) fails the lookup
// and the write that asked, naming the scheme, before the search copies it into its 511-byte buffers.
TEST_F(MapPluginsTest, TheGuardRefusesAPrefixLongerThanLmdbKeys) {
  ASSERT_TRUE(registry_.LoadDirectories({PLANB_FIXTURE_DIR "/throwing_scheme"}).ok());
  FaultyMap map;
  OpenFaultyMap("state", "FirstCandidate:oversize", &map);
  if (HasFatalFailure()) return;
  const std::string expected = "scheme 'throwing_scheme' (" PLANB_FIXTURE_DIR
                               "/throwing_scheme/libplanb_throwing_scheme.so): KeyScheme::FirstCandidate gave a "
                               "prefix of 4294967295 bytes (LMDB keys hold 511)";
  LookupKey lookup;
  lookup.key = Bytes(std::string_view("key"));
  Row row;
  ErrorBuffer error;
  EXPECT_EQ(map.plugins->store()->Get(map.txn.table(), lookup, &row, &error), Code::kInternal);
  EXPECT_EQ(std::string(error.message), expected);
  error = ErrorBuffer();
  EXPECT_EQ(map.plugins->store()->Put(map.txn.table(), testing::StateRecord("key", "value"), &error), Code::kInternal);
  EXPECT_EQ(std::string(error.message), expected);
  MDB_val k;
  MDB_val v;
  EXPECT_EQ(mdb_cursor_get(map.txn.table().cursor, &k, &v, MDB_FIRST), MDB_NOTFOUND);  // nothing written
}

}  // namespace
}  // namespace planb
