// A State map over each id scheme (lookup_table, variable's id form), with hash clashes forced where the
// parameter says so: the fixture of the id schemes' sweep, limit and bulk-merge tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "host/plugin_host/map_plugins.h"
#include "support/clashing_keys.h"
#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb::testing {

struct IdSchemeParam {
  const char* test_name;
  const char* scheme;
  std::vector<std::pair<std::string, std::string>> options;
  std::string key_suffix;  // makes clashing keys long enough for the id form
  unsigned hash_bits;
};

inline void PrintTo(const IdSchemeParam& param, std::ostream* os) { *os << param.test_name; }

inline const IdSchemeParam kIdSchemes[] = {
    {"LookupTable8Bits", "lookup_table", {{"hash_bits", "8"}}, "", 8},
    {"VariableAllIds8Bits", "variable", {{"hash_bits", "8"}, {"direct_max", "0"}}, "", 8},
    {"Variable", "variable", {}, std::string(40, 'x'), 64},  // past direct_max 32: the id form
};

inline std::string IdSchemeName(const ::testing::TestParamInfo<IdSchemeParam>& info) {
  return info.param.test_name;
}

class IdSchemeTest : public ::testing::TestWithParam<IdSchemeParam> {
 protected:
  void SetUp() override {
    Status s = CreateMapPlugins(MakeMapConfig("m", "state", GetParam().scheme, GetParam().options), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
    s = CreateMapEnv(dir_ / "shard", plugins_, &env_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A key long enough for the id form under every parameter.
  std::string Key(const std::string& name) const { return name + GetParam().key_suffix; }

  // The (id, key) entries of `env`'s ids table (the shard's by default), without the counter.
  std::set<std::pair<std::string, std::string>> Ids(const std::shared_ptr<MapEnv>& env = nullptr) {
    TableEntries entries;
    EXPECT_TRUE(DumpPluginTable(env != nullptr ? *env : *env_, 1, false, &entries).ok());
    std::set<std::pair<std::string, std::string>> ids;
    for (const auto& [id, key] : entries) {
      if (id.size() == 4) ids.emplace(id, key);
    }
    return ids;
  }

  // Writes `entries` straight into scheme table `index` (0: index, 1: ids) of `env` (the shard's by default).
  void WriteSchemeTable(uint32_t index, const std::vector<std::pair<std::string, std::string>>& entries,
                        std::shared_ptr<MapEnv> env = nullptr) {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env != nullptr ? env : env_, true).ok());
    for (const auto& [key, value] : entries) {
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      MDB_val v{value.size(), const_cast<char*>(value.data())};
      ASSERT_EQ(mdb_put(txn.table().txn, txn.table().scheme_tables[index], &k, &v, 0), MDB_SUCCESS);
    }
    ASSERT_TRUE(txn.Commit().ok());
  }

  // Takes every clash number of `key`'s hash in the shard's index (65,536 entries of other keys, written directly:
  // through the store that would take 16M keys).
  void FillHashOf(const std::string& key) {
    const std::string hash = ExpectedHash(key, GetParam().hash_bits);
    std::vector<std::pair<std::string, std::string>> taken;
    for (uint32_t clash = 0; clash <= 0xFFFF; ++clash) {
      const std::string clash_bytes = {static_cast<char>(clash >> 8), static_cast<char>(clash & 0xFF)};
      taken.emplace_back(hash + clash_bytes, std::string("\x7f\0", 2) + clash_bytes + "another key");
    }
    WriteSchemeTable(0, taken);
  }

  // `s` refuses a key whose hash has every clash number taken, naming the limit and what to do.
  void ExpectHashFull(const Status& s) const {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Code::kFull);
    EXPECT_NE(s.message().find("share one " + std::to_string(GetParam().hash_bits) +
                               "-bit hash in the lookup table; raise hash_bits"),
              std::string::npos)
        << s.message();
  }

  // A new batch table of the map, holding `rows` (put in that order).
  std::shared_ptr<MapEnv> Batch(const std::vector<std::pair<std::string, std::string>>& rows) {
    std::shared_ptr<MapEnv> batch;
    Status s = CreateMapEnv(dir_ / ("batch-" + std::to_string(++batches_)), plugins_, &batch);
    EXPECT_TRUE(s.ok()) << s.message();
    if (batch != nullptr) {
      s = PutRows(batch, rows);
      EXPECT_TRUE(s.ok()) << s.message();
    }
    return batch;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  std::shared_ptr<MapEnv> env_;
  int batches_ = 0;
};

}  // namespace planb::testing
