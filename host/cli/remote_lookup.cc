#include "host/cli/remote_lookup.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "host/commands/lookup_output.h"
#include "host/commands/lookup_wire.h"
#include "host/commands/read_commands.h"
#include "host/common/numbers.h"
#include "host/transfer/remote_read.h"

namespace planb {
namespace {

using Clock = std::chrono::steady_clock;

// One READ's result. `wire` views `out`: an Answer stays where it was made (a deque keeps it in place).
struct Answer {
  int exit_code = kExitError;
  std::string out;
  std::string err;
  std::string node;
  WireAnswers wire;  // decoded when exit_code is 0 or 1
};

struct Wait {
  uint64_t min_batches = 0;
  Clock::time_point deadline;
  int64_t wait_ms = 0;
};

// Asks `request` (a lookup in wire format) once. Errors: no node answered, or the answer does not
// decode. An answer with exit status 2 is returned as it is: its stderr says what is wrong.
Status Ask(RemoteReader& reader, const protocol::ReadRequest& request, Answer* answer) {
  const size_t keys = request.keys.size();
  PLANB_RETURN_IF_ERROR(reader.Read(request, &answer->exit_code, &answer->out, &answer->err, &answer->node));
  if (answer->exit_code != kExitOk && answer->exit_code != kExitNotFound) return Status::Ok();
  return DecodeLookupWire(answer->out, keys, &answer->wire).WithContext("storage node " + answer->node);
}

// Asks until the answer was read from content version `wait->min_batches` or newer, or the deadline passes
// (`*fresh` false). A node's merges land on their own time: look again after a short pause that grows, as
// WaitForMinVersion does locally.
Status AskFresh(RemoteReader& reader, const protocol::ReadRequest& request, const std::optional<Wait>& wait,
                Answer* answer, bool* fresh) {
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    *answer = Answer();
    PLANB_RETURN_IF_ERROR(Ask(reader, request, answer));
    const bool answered = answer->exit_code == kExitOk || answer->exit_code == kExitNotFound;
    *fresh = !wait || !answered || answer->wire.batches >= wait->min_batches;  // an error is final, not stale
    if (*fresh || Clock::now() >= wait->deadline) return Status::Ok();
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, wait->deadline - Clock::now()));
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

}  // namespace

int RunRemoteLookup(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const ClusterConfig& cluster = runtime.config().cluster;
  const std::string& map = cli.args[0];
  LookupFormat format = LookupFormat::kText;
  if (cli.format && !ParseLookupFormat(*cli.format, &format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of text, json, csv\n";
    return kExitError;
  }
  std::optional<Wait> wait;
  if (cli.min_version) {
    wait.emplace();
    if (!ParseCount(*cli.min_version, UINT64_MAX, &wait->min_batches)) {
      err << "planb: --min-version: '" << *cli.min_version
          << "' is not a content version (a whole number, as load prints it)\n";
      return kExitError;
    }
    wait->wait_ms = 10 * cluster.request_timeout_ms;  // as long as a local lookup waits
    wait->deadline = Clock::now() + std::chrono::milliseconds(wait->wait_ms);
  }
  // The request is typed (docs/protocol.md READ): --keys-from is read here and --min-version waited for here,
  // since a node reads no files and does not wait for a READ.
  protocol::ReadRequest head;
  head.kind = protocol::ReadKind::kLookup;
  head.map = map;
  head.format = protocol::ReadFormat::kWire;
  head.quiet = cli.quiet;
  if (cli.time && !ParseLookupTime(*cli.time, &head.time_ms.emplace(), err)) return kExitError;
  std::vector<std::string> keys;
  if (!CollectLookupKeys(cli, &keys, err)) return kExitError;
  const std::vector<protocol::ReadRequest> requests = SplitLookupRequest(head, keys);

  zmq::context_t context;
  RemoteReader reader(context, cluster);  // one connection per node for every READ below, waits included
  std::deque<Answer> answers;
  bool fresh = true;
  // One READ; false when the lookup ends here (no node answered, an answer in error, the wait ran out).
  Status s;
  const auto ask = [&](const protocol::ReadRequest& request) {
    Answer& answer = answers.emplace_back();
    s = AskFresh(reader, request, wait, &answer, &fresh);
    return s.ok() && fresh && (answer.exit_code == kExitOk || answer.exit_code == kExitNotFound);
  };
  // A short READ (one key) polls for the version, so that a wait does not resend a megabyte of keys each time.
  bool go_on = true;
  if (wait && (requests.size() > 1 || keys.size() > 1)) {
    protocol::ReadRequest probe = head;
    probe.keys = {keys[0]};
    go_on = ask(probe);
    if (go_on) answers.pop_back();
  }
  for (size_t i = 0; go_on && i < requests.size(); ++i) go_on = ask(requests[i]);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  const Answer& last = answers.back();
  if (last.exit_code != kExitOk && last.exit_code != kExitNotFound) {
    // As the local command: an error leaves stdout empty and says only what is wrong.
    err.write(last.err.data(), static_cast<std::streamsize>(last.err.size()));
    return last.exit_code;
  }
  if (!fresh) {
    err << "planb: " << map << ": content version " << wait->min_batches << " did not arrive within "
        << wait->wait_ms << " ms (10 x request_timeout); storage node " << last.node << "'s shard is at "
        << last.wire.batches << "\n";
    return kExitError;
  }
  for (const Answer& answer : answers) {
    // Content version 0: nothing was ever merged into the map on that node (it answers every key as missing
    // so that a --min-version wait can go on), which is an error once the waiting is over, not a miss.
    if (answer.wire.batches == 0) {
      err << "planb: map " << map << " has no data on storage node " << answer.node
          << ": nothing was merged into it there yet\n";
      return kExitError;
    }
  }

  LookupShape shape;
  shape.session = answers.front().wire.session;
  shape.number_keys = answers.front().wire.number_keys;
  shape.single = keys.size() == 1;
  shape.batches = UINT64_MAX;
  shape.shown = answers.front().wire.shown;
  const auto same_fields = [](const std::vector<ShownField>& a, const std::vector<ShownField>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].name != b[i].name || a[i].spec.kind != b[i].spec.kind ||
          a[i].zero_when_absent != b[i].zero_when_absent) {
        return false;
      }
    }
    return true;
  };
  for (const Answer& answer : answers) {
    if (answer.wire.session != shape.session || answer.wire.number_keys != shape.number_keys ||
        !same_fields(answer.wire.shown, shape.shown)) {
      err << "planb: storage nodes " << answers.front().node << " and " << answer.node << " answer lookups of "
          << map << " in different shapes (is the map configured alike on every node?)\n";
      return kExitError;
    }
    shape.batches = std::min(shape.batches, answer.wire.batches);  // --format wire: the oldest part's version
  }
  int exit_code = kExitOk;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(format, shape, out);
  size_t key = 0;
  std::vector<FieldValue> fields;  // one found answer's shown fields, as a Row carries them
  for (const Answer& answer : answers) {
    for (const WireAnswer& one : answer.wire.answers) {
      int64_t number = 0;
      if (shape.number_keys) (void)ParseInt64(keys[key], &number);  // the node parsed it already
      if (one.found) {
        Row row;
        row.value = Bytes(one.value);
        row.session_start_ms = one.start_ms;
        row.session_end_ms = one.end_ms;
        if (!shape.shown.empty()) {  // decoded as RowField::kOwn at their positions (lookup_wire.h)
          const auto first = answer.wire.fields.begin() + static_cast<std::ptrdiff_t>(one.first_field);
          fields.assign(first, first + static_cast<std::ptrdiff_t>(shape.shown.size()));
          row.own_fields = fields.data();
          row.own_field_count = static_cast<uint32_t>(fields.size());
        }
        writer->Found(keys[key], number, row);
      } else {
        exit_code = kExitNotFound;
        writer->Missing(keys[key], number);
      }
      ++key;
    }
  }
  writer->Finish();
  for (const Answer& answer : answers) err.write(answer.err.data(), static_cast<std::streamsize>(answer.err.size()));
  return exit_code;
}

}  // namespace planb
