// planb: the Plan B host program. Parses the command line, opens the runtime (config, plugins, home) and runs
// one command. Exceptions from libraries stop here, as a message and exit status 2.
#include <unistd.h>

#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "host/cli/command_log.h"
#include "host/cli/commands.h"
#include "host/commands/command_line.h"
#include "host/common/bulk_buffers.h"
#include "host/common/crash_report.h"
#include "host/common/standard_descriptors.h"
#include "host/runtime.h"

namespace {

int Run(int argc, char** argv) {
  using namespace planb;
  InstallCrashReport();  // a plugin's fatal signal is said, naming it (crash_report.h)
  std::vector<std::string> args(argv + 1, argv + argc);
  CommandLine cli;
  Status s = ParseCommandLine(args, &cli);
  if (!s.ok()) {
    std::cerr << "planb: " << s.message() << "\nTry 'planb --help'.\n";
    return kExitError;
  }
  if (cli.help) {
    std::cout << UsageText(cli.command);
    return kExitOk;
  }
  if (cli.version) {
    std::cout << "planb " << PLANB_VERSION << " (plugin SDK " << kAbiMajor << "." << kAbiMinor << ")\n";
    return kExitOk;
  }
  if (cli.command == "conform") return RunConformCommand(cli, std::cout, std::cerr);  // a scratch home of its own
  if (cli.command == "enrich") {  // a Reader of its own
    std::ios::sync_with_stdio(false);
    return RunEnrichCommand(cli, std::cout, std::cerr);
  }
  if (cli.command == "keygen") return RunKeygenCommand(cli, std::cout, std::cerr);  // no config, no home
  RuntimeOptions options;
  options.config_path = cli.config;
  options.home = cli.home;
  options.plugin_dirs = cli.plugin_dirs;
  // Reads work on a home this user may not write (issue 11): they create nothing and open shards read-only.
  options.read_only = cli.command == "lookup" || cli.command == "query" || cli.command == "stores" ||
                      cli.command == "plugins" || cli.command == "bench" ||  // bench writes only its scratch home
                      cli.command == "backup" ||  // reads the home, writes only DEST
                      cli.command == "export";    // reads a map, writes only OUT
  // Every plugin file, not only those the maps name: `plugins` lists them all, `bench` tries every scheme.
  options.all_plugins = cli.command == "plugins" || cli.command == "bench";
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    options.fetch_progress = [](uint64_t done, uint64_t total) {
      const uint64_t percent = total == 0 ? 100 : done * 100 / total;
      std::cerr << "\r\033[Kfetching snapshot: " << percent << "% of " << total << " bytes" << std::flush;
      if (done >= total) std::cerr << "\r\033[K" << std::flush;  // done: clear the progress line
    };
  }
  std::unique_ptr<Runtime> runtime;
  s = Runtime::Open(options, &runtime);
  if (!s.ok()) {
    std::cerr << "planb: " << s.message() << "\n";
    return kExitError;
  }
  // docs/operations.md "Logs": a command's stderr lines as log lines (log_format, log_level); serve formats its
  // own log. The plain stream is back before the wrapper goes, which writes what it still holds.
  const OperationsConfig& operations = runtime->config().operations;
  std::unique_ptr<CommandLogBuf> log_lines;
  struct RestoreStderr {
    std::streambuf* plain;
    ~RestoreStderr() {
      std::cerr.flush();
      std::cerr.rdbuf(plain);
    }
  } restore{std::cerr.rdbuf()};
  if (cli.command != "serve" &&
      (operations.log_format == LogFormat::kJson || operations.log_level < LogLevel::kInfo)) {
    log_lines = std::make_unique<CommandLogBuf>(restore.plain, cli.command, operations.log_level,
                                                operations.log_format);
    std::cerr.rdbuf(log_lines.get());
  }
  if (cli.command == "delete") return RunDeleteCommand(*runtime, cli, std::cout, std::cerr);  // --remote: its own
  if (cli.remote) return RunRemoteCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "load") return RunLoadCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "lookup") return RunLookupCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "query") return RunQueryCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "export") return RunExportCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "serve") return RunServeCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "stores") return RunStoresCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "maintain") return RunMaintainCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "cleanup") return RunCleanupCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "backup") return RunBackupCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "plugins") return RunPluginsCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "refresh") return RunRefreshCommand(*runtime, cli, std::cout, std::cerr);
  if (cli.command == "bench") return RunBenchCommand(*runtime, cli, std::cout, std::cerr);
  std::cerr << "planb: command '" << cli.command << "' is not implemented\n";
  return kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any file is opened: a closed stdout or stderr would be reused by a shard's files and written into.
  if (!planb::OpenClosedStandardDescriptors()) return planb::kExitError;
  planb::KeepBulkBuffersInProcess();
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "planb: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "planb: unknown error\n";
  }
  return planb::kExitError;
}
