// `planb lookup --remote` and `planb query --remote`: the command runs on a storage node, which opens its own
// shards; this process reads its config only, never shards/ or snapshots/. Lookups: remote_lookup.h.
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/cli/commands.h"
#include "host/cli/remote_lookup.h"
#include "host/transfer/remote_read.h"

namespace planb {

namespace {

// The query's tokens as the node's parser takes them: options first, then "--" so that an argument starting
// with '-' stays an argument.
std::vector<std::string> RemoteQueryArgs(const CommandLine& cli) {
  std::vector<std::string> args = {cli.command};
  if (cli.where) args.insert(args.end(), {"--where", *cli.where});
  if (cli.format) args.insert(args.end(), {"--format", *cli.format});
  if (cli.limit) args.insert(args.end(), {"--limit", *cli.limit});
  if (cli.explain) args.push_back("--explain");
  args.push_back("--");
  args.insert(args.end(), cli.args.begin(), cli.args.end());
  return args;
}

}  // namespace

int RunRemoteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  if (cli.command == "lookup") return RunRemoteLookup(runtime, cli, out, err);
  zmq::context_t context;
  int exit_code = kExitError;
  std::string node_out;
  std::string node_err;
  std::string node_used;
  const Status s =
      RemoteRead(context, runtime.config().cluster, RemoteQueryArgs(cli), &exit_code, &node_out, &node_err, &node_used);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  out.write(node_out.data(), static_cast<std::streamsize>(node_out.size()));
  out.flush();
  err.write(node_err.data(), static_cast<std::streamsize>(node_err.size()));
  return exit_code;
}

}  // namespace planb
