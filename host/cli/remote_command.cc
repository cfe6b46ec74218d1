// `planb lookup --remote` and `planb query --remote`: the command runs on a storage node, which opens its own
// shards; this process reads its config only, never shards/ or snapshots/.
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/cli/commands.h"
#include "host/transfer/remote_read.h"

namespace planb {

namespace {

// The command's tokens as the node's parser takes them: options first, then "--" so that an argument starting
// with '-' (a key such as "-5") stays an argument. A lookup's keys are read here (--keys-from names a file on
// this machine) and sent as arguments: one request for all of them.
bool RemoteArgs(const CommandLine& cli, std::vector<std::string>* out, std::ostream& err) {
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
    std::vector<std::string> keys;
    if (!CollectLookupKeys(cli, &keys, err)) return false;
    args.push_back(cli.args[0]);
    args.insert(args.end(), keys.begin(), keys.end());
  } else {
    args.insert(args.end(), cli.args.begin(), cli.args.end());
  }
  return true;
}

}  // namespace

int RunRemoteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  int exit_code = kExitError;
  std::string node_out;
  std::string node_err;
  std::string node_used;
  std::vector<std::string> args;
  if (!RemoteArgs(cli, &args, err)) return kExitError;
  Status s;
  {
    zmq::context_t context;
    s = RemoteRead(context, runtime.config().cluster, args, &exit_code, &node_out, &node_err, &node_used);
  }
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
