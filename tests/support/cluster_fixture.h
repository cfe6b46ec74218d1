// A Plan B cluster of real processes on loopback for tests: storage nodes running `planb serve`, a processing
// node that loads, and a single-node reference home that loads the same files without any network, so that
// "the shards a cluster holds" can be compared with "the shards one node builds".
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host/security/curve_key.h"
#include "support/node_process.h"
#include "support/test_env.h"

// In a test: storage node `i` of `cluster` must start; its log is printed when it does not.
#define PLANB_ASSERT_NODE_STARTS(cluster, i) \
  ASSERT_TRUE((cluster).StartNode(i)) << "node " << (i) << " did not start:\n" << (cluster).process(i).log()

namespace planb::testing {

// The example data: every store type (examples/data, written for examples/planb.ini).
std::vector<std::string> ExampleDataFiles();

// A histogram map "hits" (bucket 1h) for ClusterFixture::extra_map_sections, and `count` files of `events` hits
// each over five hours and 31 pages (<dir>/hits-N.xml), for counts that must come out exact on every node.
inline constexpr char kHitsHistogramSection[] = "[map.hits]\ntype = histogram\nscheme = hashed\nbucket = 1h\n";
std::vector<std::string> WriteHitsFiles(const std::string& dir, int count, int events);

// A [client.NAME] section for ClusterFixture::client_sections: `rights` as `allow` lists them, `maps` ("" = every
// map) as `maps` does.
std::string ClientSection(const std::string& name, const std::string& public_key, const std::string& rights,
                          const std::string& maps = "");

class ClusterFixture {
 public:
  // Storage nodes "node1", "node2", ... (`storage_nodes` of them); `map_extra` is added to every [map.*] section
  // (e.g. "synchronise_merge = true\n").
  explicit ClusterFixture(int storage_nodes = 2, const std::string& map_extra = "");

  const std::string& dir() const { return dir_.path(); }
  std::string node_name(int i) const { return "node" + std::to_string(i + 1); }
  std::string home(int i) const { return dir_ / (node_name(i) + "-home"); }
  std::string config(int i) const { return dir_ / (node_name(i) + ".ini"); }
  ServeProcess& process(int i) { return *processes_[i]; }
  const std::string& endpoint(int i) const { return endpoints_[i]; }
  // Extra top-level config lines for every node (e.g. "max_batch_size = 1MiB\n"); set before StartNode.
  std::string top_level_extra;
  // Map sections added after examples/planb.ini's on every node, the processing node and the reference home
  // (e.g. a histogram map); set before StartNode.
  std::string extra_map_sections;
  // Sections added to every config the fixture writes after its node sections (e.g. [client.proc] ...); set
  // before StartNode.
  std::string client_sections;

  // CURVE from now on: every config the fixture writes names its node's key (<dir>/keys/NAME.key) and gives
  // every [node.X] its public key. Makes the keys of the storage nodes and of "proc"; others with NewKey.
  void EnableCurve();
  // A key pair for `name` (<dir>/keys/NAME.key, .pub), made now.
  const CurveKeyPair& NewKey(const std::string& name);
  const CurveKeyPair& key(const std::string& name) const { return keys_.at(name); }

  // Gives every storage node a free loopback endpoint now (below the ephemeral range: ReservedEndpoint), so that
  // each node's config names its peers' real endpoints from the start (catch-up between nodes needs them). Call
  // before the first StartNode.
  void ReserveEndpoints();
  // Starts storage node `i` (on a free port the first time, on the same endpoint after) and waits until it
  // serves; false when it did not come up (its log is in the test output).
  bool StartNode(int i, const std::vector<std::string>& env = {});
  // Writes the config of a node `name` that is not a storage node (it reads through snapshots), with `extra`
  // top-level lines (e.g. "min_time_to_keep_snapshots = 0s\n"); returns its path. Its home: ReaderHome(name).
  std::string WriteReaderConfig(const std::string& name, const std::string& extra = "");
  std::string ReaderHome(const std::string& name) const { return dir_ / (name + "-home"); }
  // `planb --config <name>.ini --home <name>-home args...` for a node written by WriteReaderConfig.
  ProcessResult RunOnReader(const std::string& name, const std::vector<std::string>& args) const;
  // `planb load` on the processing node "proc" (not a storage node), or from storage node `from_node`'s config.
  ProcessResult Load(const std::vector<std::string>& files, int from_node = -1);
  // Writes the processing node's config (as Load does) and returns its path; its home is dir()/proc-home.
  std::string WriteProcessingConfig();
  // Waits until node `i` has merged everything staged (staging/ holds no batch).
  bool WaitMerged(int i);
  // Loads `files` through the processing node, then waits until storage nodes 0 to `nodes` - 1 merged them. A
  // failure says the load's stderr or the node's log.
  ::testing::AssertionResult LoadAndWaitMerged(const std::vector<std::string>& files, int nodes = 1);
  // The dump of node `i`'s shards (support/node_process.h DumpShards).
  std::string Dump(int i) const { return DumpShards(home(i)); }
  // The dump of a single-node home that loaded `files` once each, in order (no node list, no network).
  std::string ReferenceDump(const std::vector<std::string>& files);
  // The same for loads given as their arguments (e.g. {"--batch-id", "again", FILE}), one `planb load` each.
  std::string ReferenceDumpOfLoads(const std::vector<std::vector<std::string>>& loads);
  // The same for any commands (e.g. {"delete", "m", "--all"}), run one after another on that single-node home.
  std::string ReferenceDumpOfCommands(const std::vector<std::vector<std::string>>& commands);

 private:
  std::string MapSections() const;
  std::string ClusterKeys(const std::string& node_name, bool with_endpoints, const std::string& extra = "") const;

  TempDir dir_;
  int nodes_;
  std::string map_extra_;
  std::vector<std::string> endpoints_;  // "" until the node first served
  std::vector<std::unique_ptr<ServeProcess>> processes_;
  bool curve_ = false;
  std::map<std::string, CurveKeyPair> keys_;  // by node or client name
};

}  // namespace planb::testing
