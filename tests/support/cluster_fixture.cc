#include "support/cluster_fixture.h"

#include "support/endpoints.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "host/security/key_file.h"

namespace planb::testing {

namespace fs = std::filesystem;

::testing::AssertionResult ClusterFixture::LoadAndWaitMerged(const std::vector<std::string>& files, int nodes) {
  const ProcessResult load = Load(files);
  if (load.exit_code != 0) {
    return ::testing::AssertionFailure() << "load exited " << load.exit_code << ":\n" << load.err;
  }
  for (int i = 0; i < nodes; ++i) {
    if (!WaitMerged(i)) return ::testing::AssertionFailure() << "node " << i << " did not merge:\n" << process(i).log();
  }
  return ::testing::AssertionSuccess();
}

std::string ClientSection(const std::string& name, const std::string& public_key, const std::string& rights,
                          const std::string& maps) {
  return "[client." + name + "]\npublic_key = " + public_key + "\nallow = " + rights + "\n" +
         (maps.empty() ? "" : "maps = " + maps + "\n");
}

std::vector<std::string> ExampleDataFiles() {
  const std::string data = std::string(PLANB_SOURCE_DIR) + "/examples/data/";
  return {data + "reference-data.xml", data + "store-types.xml", data + "reference-data-update.xml"};
}

std::vector<std::string> WriteHitsFiles(const std::string& dir, int count, int events) {
  std::vector<std::string> files;
  for (int f = 0; f < count; ++f) {
    std::string xml = "<referenceData xmlns=\"reference-data:2\">\n";
    for (int i = 0; i < events; ++i) {
      xml += "<reference><map>hits</map><time>2024-01-01T" + std::to_string(10 + (i + f) % 5) +
             ":00:00Z</time><key>page-" + std::to_string((i * 7 + f) % 31) + "</key></reference>\n";
    }
    xml += "</referenceData>\n";
    files.push_back(dir + "/hits-" + std::to_string(f) + ".xml");
    WriteFile(files.back(), xml);
  }
  return files;
}

ClusterFixture::ClusterFixture(int storage_nodes, const std::string& map_extra)
    : nodes_(storage_nodes), map_extra_(map_extra), endpoints_(storage_nodes) {
  for (int i = 0; i < nodes_; ++i) processes_.push_back(std::make_unique<ServeProcess>());
}

// The example config's [map.*] sections (its top-level keys, such as home, left out), each with map_extra_.
std::string ClusterFixture::MapSections() const {
  std::istringstream in(ReadFile(std::string(PLANB_SOURCE_DIR) + "/examples/planb.ini"));
  std::string line;
  std::string sections;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("[map.", 0) == 0) {
      if (in_section) sections += map_extra_;
      in_section = true;
    }
    if (in_section) sections += line + "\n";
  }
  if (in_section) sections += map_extra_;
  return sections + extra_map_sections;
}

// Quick failure detection: a node that does not answer fails the load after 2 x 1 s, not 3 x 5 s + 2 x 10 s.
std::string ClusterFixture::ClusterKeys(const std::string& node_name, bool with_endpoints,
                                        const std::string& extra) const {
  std::string text = "node_name = " + node_name + "\nnode_list = ";
  for (int i = 0; i < nodes_; ++i) text += "," + this->node_name(i);
  // Longer under a sanitizer's slowdown (TestTimeScale; remote_command_test reads it back).
  text += "\nrequest_timeout = " + std::to_string(TestTimeScale()) +
          "s\nsend_part_attempts = 2\nsend_part_retry_delay = 50ms\n" + top_level_extra + extra;
  if (curve_) text += "secret_key_file = " + dir_ / ("keys/" + node_name + ".key") + "\n";
  for (int i = 0; i < nodes_; ++i) {
    // A storage node binds the port given with --bind; its config only needs some endpoint for each node.
    const std::string endpoint = with_endpoints && !endpoints_[i].empty() ? endpoints_[i] : "tcp://127.0.0.1:*";
    text += "[node." + this->node_name(i) + "]\nendpoint = " + endpoint + "\n";
    if (curve_) text += "public_key = " + keys_.at(this->node_name(i)).public_key + "\n";
  }
  return text + client_sections;
}

void ClusterFixture::EnableCurve() {
  curve_ = true;
  for (int i = 0; i < nodes_; ++i) NewKey(node_name(i));
  NewKey("proc");
}

const CurveKeyPair& ClusterFixture::NewKey(const std::string& name) {
  fs::create_directories(dir_ / "keys");
  CurveKeyPair pair;
  std::string key_path;
  std::string pub_path;
  const Status s = WriteKeyPair(dir_ / "keys", name, &pair, &key_path, &pub_path);
  if (!s.ok()) throw std::runtime_error("keys for " + name + ": " + s.message());
  return keys_[name] = pair;
}

void ClusterFixture::ReserveEndpoints() {
  zmq::context_t context;
  for (int i = 0; i < nodes_; ++i) {
    if (endpoints_[i].empty()) endpoints_[i] = ReservedEndpoint(context);
  }
}

bool ClusterFixture::StartNode(int i, const std::vector<std::string>& env) {
  WriteFile(config(i), ClusterKeys(node_name(i), true) + MapSections());
  const std::string bind = endpoints_[i].empty() ? "tcp://127.0.0.1:*" : endpoints_[i];
  processes_[i]->Start(config(i), home(i), bind, env);
  const std::string endpoint = processes_[i]->WaitReady();
  if (endpoint.empty()) return false;
  endpoints_[i] = endpoint;
  return true;
}

std::string ClusterFixture::WriteReaderConfig(const std::string& name, const std::string& extra) {
  const std::string path = dir_ / (name + ".ini");
  WriteFile(path, ClusterKeys(name, true, extra) + MapSections());
  return path;
}

ProcessResult ClusterFixture::RunOnReader(const std::string& name, const std::vector<std::string>& args) const {
  std::vector<std::string> all = {"--config", dir_ / (name + ".ini"), "--home", ReaderHome(name)};
  all.insert(all.end(), args.begin(), args.end());
  return RunPlanb(all);
}

std::string ClusterFixture::WriteProcessingConfig() {
  const std::string path = dir_ / "proc.ini";
  WriteFile(path, ClusterKeys("proc", true) + MapSections());
  return path;
}

ProcessResult ClusterFixture::Load(const std::vector<std::string>& files, int from_node) {
  std::string config_path = dir_ / "proc.ini";
  std::string home_path = dir_ / "proc-home";
  if (from_node >= 0) {
    config_path = config(from_node);
    home_path = home(from_node);
    WriteFile(config_path, ClusterKeys(node_name(from_node), true) + MapSections());
  } else {
    WriteFile(config_path, ClusterKeys("proc", true) + MapSections());
  }
  std::vector<std::string> args = {"--config", config_path, "--home", home_path, "load"};
  args.insert(args.end(), files.begin(), files.end());
  return RunPlanb(args);
}

bool ClusterFixture::WaitMerged(int i) {
  const std::string staging = home(i) + "/staging";
  return WaitUntil([&] {
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(staging, ec)) {
      if (entry.path().extension() == ".zip") return false;
    }
    return !ec;
  }, {staging});
}

std::string ClusterFixture::ReferenceDump(const std::vector<std::string>& files) {
  std::vector<std::vector<std::string>> loads;
  for (const std::string& file : files) loads.push_back({file});
  return ReferenceDumpOfLoads(loads);
}

std::string ClusterFixture::ReferenceDumpOfLoads(const std::vector<std::vector<std::string>>& loads) {
  std::vector<std::vector<std::string>> commands;
  for (const std::vector<std::string>& load : loads) {
    commands.push_back({"load"});
    commands.back().insert(commands.back().end(), load.begin(), load.end());
  }
  return ReferenceDumpOfCommands(commands);
}

std::string ClusterFixture::ReferenceDumpOfCommands(const std::vector<std::vector<std::string>>& commands) {
  const std::string config_path = dir_ / "reference.ini";
  const std::string home_path = dir_ / "reference-home";
  fs::remove_all(home_path);
  WriteFile(config_path, MapSections());
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> args = {"--config", config_path, "--home", home_path};
    args.insert(args.end(), command.begin(), command.end());
    const ProcessResult result = RunPlanb(args);
    if (result.exit_code != 0) return "reference " + command.front() + " failed: " + result.err;
  }
  return DumpShards(home_path);
}

}  // namespace planb::testing
