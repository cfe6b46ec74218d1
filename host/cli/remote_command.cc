// `planb lookup --remote` and `planb query --remote`: the command runs on a storage node, which opens its own
// shards; this process reads its config only, never shards/ or snapshots/.
#include <algorithm>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/cli/commands.h"
#include "host/transfer/remote_read.h"

namespace planb {

namespace {

// The command's tokens as the node's parser takes them: options first, then "--" so that an argument starting
// with '-' (a key such as "-5") stays an argument. A lookup's keys are read here (--keys-from names a file on
// this machine) and sent as arguments, in as many requests as protocol::kMaxReadRequest needs (`keys`).
bool RemoteArgs(const CommandLine& cli, std::vector<std::string>* out, std::vector<std::string>* keys,
                std::ostream& err) {
  std::vector<std::string>& args = *out;
  args = {cli.command};
  if (cli.command == "lookup") {
    if (cli.time) args.insert(args.end(), {"--time", *cli.time});
    if (cli.format) args.insert(args.end(), {"--format", *cli.format});
    if (cli.quiet) args.push_back("--quiet");
  } else {
    if (cli.where) args.insert(args.end(), {"--where", *cli.where});
    if (cli.format) args.insert(args.end(), {"--format", *cli.format});
    if (cli.limit) args.insert(args.end(), {"--limit", *cli.limit});
    if (cli.explain) args.push_back("--explain");
  }
  args.push_back("--");
  if (cli.command == "lookup") {
    if (!CollectLookupKeys(cli, keys, err)) return false;
    args.push_back(cli.args[0]);
  } else {
    args.insert(args.end(), cli.args.begin(), cli.args.end());
  }
  return true;
}

}  // namespace

int RunRemoteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  std::vector<std::string> head;
  std::vector<std::string> keys;
  if (!RemoteArgs(cli, &head, &keys, err)) return kExitError;
  // A lookup of many keys goes as several requests, answered in order: the output is the one request's, and the
  // exit status the worst of them (0 all found, 1 some missing; an error stops there with its own).
  const std::vector<std::vector<std::string>> requests =
      cli.command == "lookup" ? SplitLookupArgs(head, keys) : std::vector<std::vector<std::string>>{head};
  int worst = kExitOk;
  zmq::context_t context;
  for (const std::vector<std::string>& args : requests) {
    int exit_code = kExitError;
    std::string node_out;
    std::string node_err;
    std::string node_used;
    const Status s = RemoteRead(context, runtime.config().cluster, args, &exit_code, &node_out, &node_err, &node_used);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    out.write(node_out.data(), static_cast<std::streamsize>(node_out.size()));
    out.flush();
    err.write(node_err.data(), static_cast<std::streamsize>(node_err.size()));
    if (exit_code != kExitOk && exit_code != kExitNotFound) return exit_code;
    worst = std::max(worst, exit_code);
  }
  return worst;
}

}  // namespace planb
