// The host's guards on calls into plugins (guarded_store.h, guarded_scheme.h), end to end through the real planb
// binary: for each call of a store type and of a key scheme, a fixture plugin that throws there (throw_in =
// CALL) makes some command fail with exit 2 and an error naming the plugin, its file and the call; no process
// aborts; the failing command leaves the shard's rows as they were; other maps still work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <lmdb.h>

#include <map>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::CliEnv;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;

const std::string kStoreFile = PLANB_FIXTURE_DIR "/throwing_store/libplanb_throwing_store.so";
const std::string kSchemeFile = PLANB_FIXTURE_DIR "/throwing_scheme/libplanb_throwing_scheme.so";

// Every row of every table of the environment at `dir` (raw LMDB: no plugin involved), by table name.
std::map<std::string, std::vector<std::pair<std::string, std::string>>> DumpRows(const std::string& dir) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> rows;
  MDB_env* env = nullptr;
  EXPECT_EQ(mdb_env_create(&env), 0);
  mdb_env_set_maxdbs(env, 64);
  if (mdb_env_open(env, dir.c_str(), MDB_RDONLY | MDB_NOLOCK, 0644) != 0) {
    ADD_FAILURE() << "cannot open " << dir;
    mdb_env_close(env);
    return rows;
  }
  MDB_txn* txn = nullptr;
  EXPECT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
  auto dump = [&](MDB_dbi dbi, const std::string& name) {
    MDB_cursor* cursor = nullptr;
    EXPECT_EQ(mdb_cursor_open(txn, dbi, &cursor), 0);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      rows[name].emplace_back(std::string(static_cast<char*>(k.mv_data), k.mv_size),
                              std::string(static_cast<char*>(v.mv_data), v.mv_size));
    }
    mdb_cursor_close(cursor);
  };
  MDB_dbi main = 0;
  EXPECT_EQ(mdb_dbi_open(txn, nullptr, 0, &main), 0);
  dump(main, "");
  for (const auto& [name, unused] : std::vector<std::pair<std::string, std::string>>(rows[""])) {
    MDB_dbi dbi = 0;
    if (mdb_dbi_open(txn, name.c_str(), 0, &dbi) == 0) dump(dbi, name);
  }
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return rows;
}

struct GuardCase {
  bool store;        // the call is the store type's (else the scheme's)
  std::string call;  // the throw_in value
};

std::string CaseName(const ::testing::TestParamInfo<GuardCase>& info) {
  return std::string(info.param.store ? "Store_" : "Scheme_") + info.param.call;
}

class PluginGuards : public ::testing::TestWithParam<GuardCase> {
 protected:
  // The map "m": throwing_store over hashed, or state over throwing_scheme, with `throw_in`.
  static std::string Config(bool store, const std::string& throw_in) {
    return std::string("plugin_dir = ") + PLANB_FIXTURE_DIR + "/throwing_store\nplugin_dir = " + PLANB_FIXTURE_DIR +
           "/throwing_scheme\n[map.m]\n" +
           (store ? "type = throwing_store\nscheme = hashed\nretain_for = 1d\n" : "type = state\nscheme = throwing_scheme\n") +
           "throw_in = " + throw_in + "\n[map.other]\ntype = state\n";
  }
};

TEST_P(PluginGuards, AThrowIsAnErrorNamingThePluginAndTheCallAndWritesNothing) {
  const GuardCase& c = GetParam();
  CliEnv env(Config(c.store, "none"));
  // Keys of one length clash in throwing_scheme, so that its every call is reached.
  const std::string first = env.Write("first.xml", ReferenceData(Ref("m", "a", "1") + "\n" + Ref("m", "b", "2") +
                                                                 "\n" + Ref("other", "x", "y")));
  ProcessResult r = env.Load({first});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(DumpRows(env.home() + "/shards/m")["data"].empty());

  testing::WriteFile(env.config(), Config(c.store, c.call));
  const std::string second = env.Write("second.xml", ReferenceData(Ref("m", "a", "3") + "\n" + Ref("m", "c", "4")));
  const std::vector<std::vector<std::string>> commands = {
      {"load", second},           {"lookup", "m", "a"},        {"lookup", "m", "b"}, {"lookup", "m", "zz"},
      {"query", "m"},             {"query", "m", "--where", "Key = 'b'"}, {"delete", "m", "--where", "Key = 'b'"},
      {"maintain", "--once", "--map", "m"}};
  const std::string label = c.store ? "store type 'throwing_store' (" + kStoreFile + "): "
                                    : "scheme 'throwing_scheme' (" + kSchemeFile + "): ";
  const std::string interface = c.call == "create"        ? ""
                                : c.store                 ? "Store::"
                                : c.call == "PlaceRow" ? "MergePlan::"
                                : c.call == "PlaceValue" || c.call == "Finish" ? "ValuePlan::"
                                                          : "KeyScheme::";
  const std::string expected = label + interface + c.call + " threw: injected failure in " + c.call;
  int failed = 0;
  std::string all_err;
  for (const std::vector<std::string>& command : commands) {
    const auto rows = DumpRows(env.home() + "/shards/m");
    r = env.Run(command);
    EXPECT_NE(r.exit_code, -1) << command[0] << " did not exit normally: " << r.err;
    if (r.err.find(expected) != std::string::npos) {
      EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
      EXPECT_EQ(DumpRows(env.home() + "/shards/m"), rows) << command[0] << " wrote to the shard";
      ++failed;
    }
    all_err += r.err;
  }
  EXPECT_GT(failed, 0) << "no command said: " << expected << "\nstderr:\n" << all_err;

  r = env.Run({"lookup", "other", "x"});  // another map is not affected (unless the config as a whole fails)
  if (c.call != "create" && c.call != "Layout" && c.call != "TablesInUse" && c.call != "StoresValuesAsGiven") {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("y"));
  } else {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(expected));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Calls, PluginGuards,
    ::testing::Values(GuardCase{true, "create"}, GuardCase{true, "Put"}, GuardCase{true, "Merge"},
                      GuardCase{true, "Get"}, GuardCase{true, "DecodeRow"}, GuardCase{true, "Maintain"},
                      GuardCase{true, "DeleteRow"}, GuardCase{true, "FinishDeletes"}, GuardCase{true, "ScanRange"},
                      GuardCase{false, "create"}, GuardCase{false, "FirstCandidate"}, GuardCase{false, "RowHasKey"},
                      GuardCase{false, "MatchStoredKey"}, GuardCase{false, "StoresValuesAsGiven"},
                      GuardCase{false, "NextCandidate"}, GuardCase{false, "NewPrefix"},
                      GuardCase{false, "StoredKeySize"}, GuardCase{false, "WriteStoredKey"},
                      GuardCase{false, "DecodeRow"}, GuardCase{false, "EncodeValue"}, GuardCase{false, "DecodeValue"},
                      GuardCase{false, "ReleaseValue"}, GuardCase{false, "SweepUnusedKeys"},
                      GuardCase{false, "PlanMerge"}, GuardCase{false, "PlaceRow"}, GuardCase{false, "PlanValues"},
                      GuardCase{false, "PlaceValue"}, GuardCase{false, "Finish"},
                      GuardCase{false, "Layout"}, GuardCase{false, "TablesInUse"}),
    CaseName);

}  // namespace
}  // namespace planb
