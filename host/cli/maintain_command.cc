// `planb maintain [--once] [--dry-run] [--map MAP]`: maintenance of this node's shards (maintenance_runner.h),
// one line per map on stdout as each is done, then one per orphan shard; without --once, a pass every maintain_interval until
// SIGTERM/SIGINT. Exit 2 when a map's maintenance failed (the others are still done) or on bad arguments.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "host/cli/commands.h"
#include "host/common/iso_time.h"
#include "host/maintain/maintenance_runner.h"

namespace planb {

namespace {

std::atomic<bool> stop_maintaining{false};

extern "C" void StopMaintaining(int) { stop_maintaining.store(true); }

// Sleeps until `deadline` or a stop signal, checking the flag often enough to stop promptly (a signal handler
// may not notify a condition variable).
void SleepUntilStopped(std::chrono::steady_clock::time_point deadline) {
  while (!stop_maintaining.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

int RunMaintainCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  if (cli.dry_run && !cli.once) {
    err << "planb: maintain: --dry-run needs --once (a dry run reports one pass)\n";
    return kExitError;
  }
  if (cli.map && runtime.config().FindMap(*cli.map) == nullptr) {
    err << "planb: maintain: unknown map '" << *cli.map << "' (not in the config)\n";
    return kExitError;
  }
  struct sigaction action {};
  action.sa_handler = StopMaintaining;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  bool failed = false;
  for (;;) {
    MaintenanceOptions options;
    options.dry_run = cli.dry_run;
    options.map = cli.map;
    options.now_ms = CurrentTimeMs();
    options.stop = &stop_maintaining;
    options.on_map = [&](const MapMaintenanceReport& map) {
      (map.status.ok() ? out : err) << (map.status.ok() ? "" : "planb: maintain: ")
                                     << DescribeMapMaintenance(map, cli.dry_run) << std::endl;
    };
    MaintenanceReport report;
    const Status s = RunMaintenance(runtime, options, &report);
    for (const std::string& line :
         DescribeOrphans(report.orphans, runtime.config().delete_orphans_after_ms, cli.dry_run)) {
      out << line << "\n";
    }
    if (!report.orphans.record_problem.empty()) {
      err << "planb: maintain: " << report.orphans.record_problem << "\n";
    }
    for (const std::string& path : report.leftovers_removed) out << "removed '" << path << "'\n";
    if (!s.ok()) {
      failed = true;
      bool reported = false;
      for (const MapMaintenanceReport& map : report.maps) reported = reported || !map.status.ok();
      if (!reported) err << "planb: maintain: " << s.message() << "\n";
    }
    if (cli.once || stop_maintaining.load()) break;
    SleepUntilStopped(std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(runtime.config().maintain_interval_ms));
    if (stop_maintaining.load()) break;
  }
  return failed ? kExitError : kExitOk;
}

}  // namespace planb
