// Which shared libraries a planb process maps (issue 42, process start): a local read opens none of the
// libraries only transfers, serve and MaxMind input need (host/on_demand/), and a command that needs one opens
// it when it first calls it; a command loads the plugin files its config's maps name, not every one (`planb
// plugins` loads them all). Told by the dynamic loader itself (LD_DEBUG=files lists every object it opens).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"

namespace planb::testing {
namespace {

const char* const kOnDemandLibraries[] = {"libzmq.so.5", "libzip.so.4", "libmicrohttpd.so.12", "libsystemd.so.0",
                                          "libmaxminddb.so.0", "libgnutls", "libcrypto"};

// planb `args` under LD_DEBUG=files: its stderr holds the loader's list of the files it opened.
ProcessResult RunPlanbTracingLoads(const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.binary = "/usr/bin/env";
  spec.args = {"LD_DEBUG=files", PLANB_BINARY};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  return RunProcess(spec);
}

bool Opened(const ProcessResult& run, const std::string& library) {
  return run.err.find("file=" + library) != std::string::npos;
}

TEST(LoadedLibraries, ALocalLookupOpensNoTransferServeOrMaxMindLibrary) {
  CliEnv env;
  const std::string data = env.Write("d.xml", ReferenceData(Ref("city_to_country", "Paris", "FR")));
  ASSERT_EQ(env.Load({data}).exit_code, 0);
  const ProcessResult lookup = RunPlanbTracingLoads(
      {"--home", env.home(), "--config", env.config(), "lookup", "city_to_country", "Paris"});
  ASSERT_EQ(lookup.exit_code, 0) << lookup.err.substr(0, 2000);
  EXPECT_EQ(lookup.out, "FR\n");
  // The trace is there and lists what the command does need: the check below can see a library.
  ASSERT_TRUE(Opened(lookup, "liblmdb.so.0")) << lookup.err.substr(0, 2000);
  for (const char* library : kOnDemandLibraries) EXPECT_FALSE(Opened(lookup, library)) << library;
}

TEST(LoadedLibraries, ACommandLoadsThePluginsItsMapsNameAndNoOthers) {
  CliEnv env("[map.cities]\ntype = state\nscheme = direct\n[map.nets]\ntype = ranged\n[map.people]\ntype = state\n");
  const std::string data = env.Write("d.xml", ReferenceData(Ref("cities", "Paris", "FR")));
  ASSERT_EQ(env.Load({data}).exit_code, 0);
  const ProcessResult lookup =
      RunPlanbTracingLoads({"--home", env.home(), "--config", env.config(), "lookup", "cities", "Paris"});
  ASSERT_EQ(lookup.exit_code, 0) << lookup.err.substr(0, 2000);
  EXPECT_EQ(lookup.out, "FR\n");
  // people has no scheme: the default, hashed.
  for (const char* used : {"libplanb_state_store.so", "libplanb_direct_key.so", "libplanb_ranged_store.so",
                           "libplanb_hashed_key.so"}) {
    EXPECT_TRUE(Opened(lookup, std::string(PLANB_PLUGIN_DIR) + "/" + used)) << used;
  }
  for (const char* unused : {"libplanb_temporal_store.so", "libplanb_session_store.so", "libplanb_histogram_store.so",
                             "libplanb_lookup_table_key.so", "libplanb_variable_key.so", "libplanb_hybrid_key.so"}) {
    EXPECT_FALSE(Opened(lookup, std::string(PLANB_PLUGIN_DIR) + "/" + unused)) << unused;
  }
  const ProcessResult plugins = RunPlanbTracingLoads({"--config", env.config(), "plugins"});
  ASSERT_EQ(plugins.exit_code, 0) << plugins.err.substr(0, 2000);
  EXPECT_TRUE(Opened(plugins, std::string(PLANB_PLUGIN_DIR) + "/libplanb_temporal_store.so")) << "plugins: all";
}

TEST(LoadedLibraries, ACommandThatNeedsZeroMqOpensItWhenItFirstCallsIt) {
  TempDir dir;
  const ProcessResult keygen = RunPlanbTracingLoads({"keygen", "--dir", dir.path(), "node"});
  ASSERT_EQ(keygen.exit_code, 0) << keygen.err.substr(0, 2000);
  EXPECT_TRUE(Opened(keygen, "libzmq.so.5"));  // zmq_curve_keypair made the key
  EXPECT_FALSE(Opened(keygen, "libmicrohttpd.so.12"));
  EXPECT_EQ(ReadFile(dir / "node.pub").size(), 41u);  // 40 Z85 characters and a newline
}

}  // namespace
}  // namespace planb::testing
