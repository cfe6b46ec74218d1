// `planb bench`: figures for choosing a key scheme, measured on the user's own files (host/scheme_trial/).
// SIGINT and SIGTERM stop the run: the scratch home is removed and the exit status is 130.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "host/cli/bench_output.h"
#include "host/cli/commands.h"
#include "host/common/log_text.h"
#include "host/kit/conform.h"
#include "host/plugin_host/map_plugins.h"
#include "host/scheme_trial/scheme_bench.h"
#include "host/scheme_trial/scratch_dir.h"
#include "host/scheme_trial/svg_chart.h"

namespace planb {
namespace {

constexpr int kExitInterrupted = 130;       // as shells report a process stopped by SIGINT
constexpr uint64_t kMaxLookups = 10000000;  // keys held in memory per map: bounded
constexpr uint64_t kMaxRuns = 1000;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void OnStopSignal(int) { g_stop.store(true); }

// Installs the stop handlers for its lifetime and restores the previous ones after.
class StopSignals {
 public:
  StopSignals() {
    g_stop.store(false);
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = OnStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_;
  struct sigaction old_term_;
};

// A whole number in [1, max], digits only.
bool ParseCount(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n == 0 || n > max) return false;
  *out = n;
  return true;
}

// Whether the chart can be written where asked, before any time is spent: its temporary file is made and removed.
Status CheckChartPath(const std::string& path) {
  std::error_code ec;
  if (path.empty()) return Status::Invalid("--chart: an empty path");
  if (std::filesystem::is_directory(path, ec)) return Status::Invalid("--chart " + LogValue(path) + ": a directory");
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Invalid("--chart " + LogValue(path) + ": cannot write there: " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(temp.c_str());
  return Status::Ok();
}

int Fail(const Status& s, std::ostream& err) {
  err << "planb: bench: " << s.message() << "\n";
  return kExitError;
}

std::string Known(const PluginRegistry& registry, PluginKind kind) {
  std::string names;
  for (const LoadedPlugin& p : registry.plugins()) {
    if (p.descriptor->kind == kind) names += (names.empty() ? "" : ", ") + std::string(p.descriptor->name);
  }
  return names.empty() ? "none" : names;
}

// bench --type T [--scheme S] [--option k=v]... [--map NAME]: one map made from the flags instead of the config's
// maps, benched beside the raw LMDB baseline. `config` is the runtime's with its maps replaced by that one.
Status TypeBench(const Runtime& runtime, const CommandLine& cli, Config* config, BenchOptions* options) {
  if (cli.maps)
    return Status::Invalid("--maps does not go with --type (the map is made from the flags; --map names it)");
  const PluginRegistry& registry = runtime.registry();
  const LoadedPlugin* type = registry.Find(PluginKind::kStoreType, *cli.type);
  if (type == nullptr) {
    return Status::Invalid("--type: unknown store type '" + LogValue(*cli.type) +
                           "' (loaded: " + Known(registry, PluginKind::kStoreType) + ")");
  }
  if (!type->descriptor->uses_key_scheme) {
    return Status::Invalid("--type " + *cli.type +
                           " takes no key scheme: bench compares key schemes (try planb "
                           "conform for the type itself)");
  }
  MapConfig map;
  map.name = NormaliseMapName(cli.map.value_or(kKitDefaultMap));
  if (!IsValidMapName(map.name)) return Status::Invalid("--map " + LogValue(*cli.map) + ": not a map name");
  map.type = *cli.type;
  if (cli.scheme) {
    if (registry.Find(PluginKind::kKeyScheme, *cli.scheme) == nullptr) {
      return Status::Invalid("--scheme: unknown key scheme '" + LogValue(*cli.scheme) +
                             "' (loaded: " + Known(registry, PluginKind::kKeyScheme) + ")");
    }
    map.scheme = *cli.scheme;
    options->only_scheme = *cli.scheme;
  }
  for (const std::string& text : cli.plugin_options) {
    std::pair<std::string, std::string> option;
    PLANB_RETURN_IF_ERROR(ParseOptionArgument(text, &option));
    map.plugin_options.push_back(std::move(option));
  }
  std::unique_ptr<MapPlugins> plugins;  // checks the options against the type's and scheme's declarations
  PLANB_RETURN_IF_ERROR(MapPlugins::Create(map, registry, &plugins).WithContext("--type, --scheme, --option"));
  config->maps.clear();
  config->maps[map.name] = map;
  options->maps = {map.name};
  options->maps_named = true;
  options->raw_baseline = true;
  return Status::Ok();
}

}  // namespace

int RunBenchCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  BenchOptions options;
  if (cli.data.empty()) return Fail(Status::Invalid("--data FILE.xml... is required (the files to measure with)"), err);
  options.files = cli.data;
  OutputFormat format = OutputFormat::kTable;
  if (cli.format && !ParseOutputFormat(*cli.format, &format)) {
    return Fail(Status::Invalid("--format: '" + LogValue(*cli.format) + "' is not table, csv or json"), err);
  }
  if (cli.lookups && !ParseCount(*cli.lookups, kMaxLookups, &options.lookups)) {
    return Fail(Status::Invalid("--lookups: '" + LogValue(*cli.lookups) + "' is not a whole number from 1 to " +
                                std::to_string(kMaxLookups)),
                err);
  }
  uint64_t runs = options.runs;
  if (cli.runs && !ParseCount(*cli.runs, kMaxRuns, &runs)) {
    return Fail(Status::Invalid("--runs: '" + LogValue(*cli.runs) + "' is not a whole number from 1 to " +
                                std::to_string(kMaxRuns)),
                err);
  }
  options.runs = static_cast<uint32_t>(runs);
  if (cli.chart) {
    Status s = CheckChartPath(*cli.chart);
    if (!s.ok()) return Fail(s, err);
  }
  Config config = runtime.config();
  Status s;
  if (cli.type) {
    s = TypeBench(runtime, cli, &config, &options);
  } else if (cli.scheme || !cli.plugin_options.empty()) {
    s = Status::Invalid(std::string(cli.scheme ? "--scheme" : "--option") + " goes with --type");
  } else {
    const std::string* names = cli.maps ? &*cli.maps : nullptr;
    s = SelectBenchMaps(config, runtime.registry(), names, &options.maps);
    options.maps_named = names != nullptr;
  }
  if (!s.ok()) return Fail(s, err);
  options.scratch_parent = cli.scratch ? *cli.scratch : DefaultScratchParent();

  StopSignals signals;
  options.stop = &g_stop;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const auto start = std::chrono::steady_clock::now();
  bool progress_shown = false;
  if (terminal) {
    options.progress = [&](const BenchProgress& p) {
      if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;  // short runs stay quiet
      progress_shown = true;
      constexpr size_t kBarWidth = 24;
      const size_t done = p.trials == 0 ? 0 : (p.trial - 1) * kBarWidth / p.trials;  // trials finished before this
      err << "\r\033[Kbench [" << std::string(done, '#') << std::string(kBarWidth - done, '.') << "] " << p.trial
          << "/" << p.trials << " " << p.map << " " << p.label << " run " << p.run << "/" << p.runs << std::flush;
    };
  }
  BenchResult result;
  s = RunSchemeBench(config, runtime.registry(), options, &result);
  if (progress_shown) err << "\r\033[K" << std::flush;
  if (g_stop.load()) {
    err << "planb: bench: interrupted; the scratch home was removed\n";
    return kExitInterrupted;
  }
  if (!s.ok()) return Fail(s, err);
  if (cli.chart) {
    s = WriteSvgChart(result, *cli.chart);
    if (!s.ok()) return Fail(s, err);
  }
  PrintBenchResult(result, format, out);
  return kExitOk;
}

}  // namespace planb
