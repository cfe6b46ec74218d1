// `planb conform`: a plugin author's checks (host/kit/conform.h) from the command line. Needs no config: the
// type, scheme, options and plugin directories come from the flags, the scratch home is its own.
#include <unistd.h>

#include <climits>

#include "host/cli/commands.h"
#include "host/common/log_text.h"
#include "host/kit/conform.h"
#include "host/scheme_trial/scratch_dir.h"

namespace planb {
namespace {

int Fail(const Status& s, std::ostream& err) {
  err << "planb: conform: " << s.message() << "\n";
  return kExitError;
}

// The path of this program, for the child load (the merge check).
Status SelfPath(std::string* path) {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return Status::IOError("cannot find this program's path (/proc/self/exe)");
  path->assign(buffer, static_cast<size_t>(n));
  return Status::Ok();
}

}  // namespace

int RunConformCommand(const CommandLine& cli, std::ostream& out, std::ostream& err) {
  ConformOptions options;
  if (!cli.config.empty() || !cli.home.empty()) {
    return Fail(Status::Invalid(std::string(cli.config.empty() ? "--home" : "--config") +
                                " does not apply to conform: it makes a config and home of its own from the flags"),
                err);
  }
  if (!cli.type) return Fail(Status::Invalid("--type TYPE is required (the store type to check)"), err);
  options.type = *cli.type;
  if (cli.scheme) options.scheme = *cli.scheme;
  if (cli.data.size() != 2) {
    return Fail(Status::Invalid("--data takes two files, FIRST.xml SECOND.xml (got " + std::to_string(cli.data.size()) +
                                "): the first is loaded, then the second"),
                err);
  }
  options.first = cli.data[0];
  options.second = cli.data[1];
  if (!cli.expect) return Fail(Status::Invalid("--expect ROWS.csv is required (the rows after both files)"), err);
  options.expect = *cli.expect;
  options.unordered = cli.unordered;
  for (const std::string& text : cli.plugin_options) {
    std::pair<std::string, std::string> option;
    Status s = ParseOptionArgument(text, &option);
    if (!s.ok()) return Fail(s, err);
    options.options.push_back(std::move(option));
  }
  if (cli.map) options.map = *cli.map;
  options.plugin_dirs = cli.plugin_dirs;
  options.scratch_parent = cli.scratch ? *cli.scratch : DefaultScratchParent();
  Status s = SelfPath(&options.planb_exe);
  if (!s.ok()) return Fail(s, err);
  ConformSummary summary;
  s = RunConformance(options, out, &summary);
  out.flush();
  if (!s.ok()) return Fail(s, err);
  return summary.failed == 0 ? kExitOk : kExitNotFound;  // 1: a check failed, as test runners exit
}

}  // namespace planb
