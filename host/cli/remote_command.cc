// `planb lookup --remote` and `planb query --remote`: the command runs on a storage node, which opens its own
// shards; this process reads its config only, never shards/ or snapshots/. Lookups: remote_lookup.h.
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/cli/commands.h"
#include "host/cli/remote_lookup.h"
#include "host/commands/read_commands.h"
#include "host/commands/remote_read_request.h"
#include "host/common/numbers.h"
#include "host/transfer/remote_read.h"

namespace planb {

namespace {

// The query as a typed READ (docs/protocol.md): its options checked here, as the local command checks them, so
// that a node gets only well-formed fields.
bool RemoteQueryRequest(const CommandLine& cli, protocol::ReadRequest* request, std::ostream& err) {
  request->kind = protocol::ReadKind::kQuery;
  request->map = cli.args[0];
  request->where = cli.where;
  request->explain = cli.explain;
  OutputFormat format = OutputFormat::kTable;
  if (!ParseOutputFormat(cli.format.value_or("table"), &format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of table, csv, json\n";
    return false;
  }
  request->format = ReadFormatOf(format);
  if (cli.limit) {
    uint64_t limit = 0;
    if (!ParseCount(*cli.limit, UINT64_MAX, &limit) || limit == 0) {
      err << "planb: --limit: '" << *cli.limit << "' is not a whole number of rows above 0\n";
      return false;
    }
    request->limit = limit;
  }
  return true;
}

}  // namespace

int RunRemoteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  if (cli.command == "lookup") return RunRemoteLookup(runtime, cli, out, err);
  protocol::ReadRequest request;
  if (!RemoteQueryRequest(cli, &request, err)) return kExitError;
  zmq::context_t context;
  int exit_code = kExitError;
  std::string node_out;
  std::string node_err;
  std::string node_used;
  const Status s =
      RemoteRead(context, runtime.config().cluster, request, &exit_code, &node_out, &node_err, &node_used);
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
