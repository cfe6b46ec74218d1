#include "host/runtime.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "host/common/file_util.h"
#include "host/common/log_text.h"

namespace planb {

namespace fs = std::filesystem;

namespace {

// Loads the plugins named for the type and scheme of every map of `config`; false when one is not found so.
bool LoadNamedPlugins(const Config& config, PluginRegistry* registry) {
  for (const auto& [name, map] : config.maps) {
    if (!registry->LoadNamed(PluginKind::kStoreType, map.type)) return false;
    const LoadedPlugin* type = registry->Find(PluginKind::kStoreType, map.type);
    if (!type->descriptor->uses_key_scheme) continue;
    if (!registry->LoadNamed(PluginKind::kKeyScheme, map.scheme.empty() ? MapPlugins::kDefaultScheme : map.scheme)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status Runtime::Open(const RuntimeOptions& options, std::unique_ptr<Runtime>* out) {
  auto runtime = std::make_unique<Runtime>();
  std::error_code ec;
  std::string config_path = options.config_path;
  if (config_path.empty() && fs::exists("planb.ini", ec)) config_path = "planb.ini";
  if (!config_path.empty()) {
    PLANB_RETURN_IF_ERROR(LoadConfig(config_path, &runtime->config_));
  } else {
    PLANB_RETURN_IF_ERROR(ParseConfig("(no config file)", "", "", &runtime->config_));  // the defaults
    runtime->config_.path.clear();
  }

  auto normal = [&ec](const std::string& dir) { return fs::weakly_canonical(fs::absolute(dir, ec), ec).string(); };
  std::vector<std::string> dirs{normal(PluginRegistry::DefaultDirectory())};
  const std::vector<std::string>* lists[] = {&runtime->config_.plugin_dirs, &options.plugin_dirs};
  for (const std::vector<std::string>* list : lists) {
    for (const std::string& dir : *list) {
      std::string path = normal(dir);
      if (std::find(dirs.begin(), dirs.end(), path) == dirs.end()) dirs.push_back(path);
    }
  }
  PluginRegistry& registry = runtime->registry_;
  PLANB_RETURN_IF_ERROR(registry.ListDirectories(dirs));
  if (options.all_plugins || !LoadNamedPlugins(runtime->config_, &registry)) registry.LoadRest();
  // A file that failed does not stop the plugins that loaded; said once, here, for every command.
  size_t said = 0;
  auto say_failures = [&registry, &said] {
    for (; said < registry.failures().size(); ++said) {
      const PluginFailure& failure = registry.failures()[said];
      std::cerr << "planb: plugin " << LogValue(failure.file) << " not loaded: " << LogValue(failure.reason) << "\n";
    }
  };
  say_failures();
  Status built = runtime->catalog_.Build(runtime->config_, registry);
  if (!built.ok() && registry.HasUnloaded()) {
    registry.LoadRest();  // the error then names every plugin there is, and the schemes that would do
    say_failures();
    built = runtime->catalog_.Build(runtime->config_, registry);
  }
  PLANB_RETURN_IF_ERROR(built);

  SetHomeFileMode(runtime->config_.file_mode);  // before anything is created in the home
  std::string home = options.home;
  if (home.empty()) home = runtime->config_.home;
  // Beside the config, as a relative `home` is: a command run from another directory (a pipeline's
  // --config /etc/planb/planb.ini) finds the same data. Without a config, the working directory's.
  if (home.empty() && !runtime->config_.path.empty()) {
    home = (fs::absolute(runtime->config_.path, ec).parent_path() / "planb-home").string();
  }
  if (home.empty()) home = "planb-home";
  if (options.read_only) {
    PLANB_RETURN_IF_ERROR(Home::Locate(home, &runtime->home_));
  } else {
    PLANB_RETURN_IF_ERROR(Home::Open(home, &runtime->home_));
  }
  runtime->envs_.set_read_only(options.read_only);
  runtime->fetch_progress_ = options.fetch_progress;
  *out = std::move(runtime);
  return Status::Ok();
}

Status Runtime::OpenShard(std::string_view map, std::shared_ptr<MapEnv>* out) {
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(catalog_.Get(map, &plugins));
  return envs_.Get(home_.ShardPath(plugins->config().name), plugins, out);
}

Status Runtime::OpenForReading(std::string_view map, StaleSnapshot stale, std::shared_ptr<MapEnv>* out) {
  std::optional<int64_t> snapshot_created_ms;
  return OpenForReading(map, stale, out, &snapshot_created_ms);
}

Status Runtime::OpenForReading(std::string_view map, StaleSnapshot stale, std::shared_ptr<MapEnv>* out,
                               std::optional<int64_t>* snapshot_created_ms) {
  snapshot_created_ms->reset();
  Status s;
  if (config_.cluster.IsStorageNode()) {
    s = OpenShard(map, out);
  } else {
    std::shared_ptr<const OpenSnapshot> snapshot;
    s = snapshots()->Current(map, stale, &snapshot);
    // Aliasing: the caller holds the environment, and through it the snapshot's lock.
    if (s.ok()) {
      *out = std::shared_ptr<MapEnv>(snapshot, snapshot->env().get());
      *snapshot_created_ms = snapshot->create_time_ms();
    }
  }
  if (s.code() != Code::kNotFound) return s;
  // Not a miss: every key of a map with no data would "miss", and a pipeline pointed at the wrong home (or
  // started before the first merge) would tag every event as one without a word.
  return Status(Code::kNoData, "map " + std::string(map) + " has no data on this node (home " + home_.root() +
                                   "): nothing was merged into it here, or this is not the home that holds it " +
                                   "(check --home and the config's home) (" + s.message() + ")");
}

SnapshotManager* Runtime::snapshots() {
  std::lock_guard<std::mutex> lock(snapshots_mutex_);
  if (!snapshots_) {
    context_ = std::make_unique<zmq::context_t>();
    snapshots_ = std::make_unique<SnapshotManager>(home_, config_.cluster, catalog_, *context_, fetch_progress_);
  }
  return snapshots_.get();
}

}  // namespace planb
