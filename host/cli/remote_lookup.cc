#include "host/cli/remote_lookup.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "host/commands/key_stream.h"
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

// Whether two answers have the same shape (a map configured alike on the nodes that gave them).
bool SameShape(const WireAnswers& a, const WireAnswers& b) {
  if (a.session != b.session || a.number_keys != b.number_keys || a.shown.size() != b.shown.size()) return false;
  for (size_t i = 0; i < a.shown.size(); ++i) {
    if (a.shown[i].name != b.shown[i].name || a.shown[i].spec.kind != b.shown[i].spec.kind ||
        a.shown[i].zero_when_absent != b.shown[i].zero_when_absent) {
      return false;
    }
  }
  return true;
}

LookupShape ShapeOf(const WireAnswers& wire, bool single) {
  LookupShape shape;
  shape.session = wire.session;
  shape.number_keys = wire.number_keys;
  shape.single = single;
  shape.batches = wire.batches;
  shape.shown = wire.shown;
  return shape;
}

// Checks an answer that came back (after AskFresh): false after printing why the lookup ends with exit 2 (the
// node's own error, a version that never came, a map with no data there).
bool Usable(const Answer& answer, const std::string& map, const std::optional<Wait>& wait, bool fresh,
            std::ostream& err) {
  if (answer.exit_code != kExitOk && answer.exit_code != kExitNotFound) {
    // As the local command: an error says only what is wrong.
    err.write(answer.err.data(), static_cast<std::streamsize>(answer.err.size()));
    return false;
  }
  if (!fresh) {
    err << "planb: " << map << ": content version " << wait->min_batches << " did not arrive within "
        << wait->wait_ms << " ms (10 x request_timeout); storage node " << answer.node << "'s shard is at "
        << answer.wire.batches << "\n";
    return false;
  }
  // Content version 0: nothing was ever merged into the map on that node (it answers every key as missing so that
  // a --min-version wait can go on), which is an error once the waiting is over, not a miss.
  if (answer.wire.batches == 0) {
    err << "planb: map " << map << " has no data on storage node " << answer.node
        << ": nothing was merged into it there yet\n";
    return false;
  }
  return true;
}

// Prints one READ's answers, for keys[first...], with `writer`; sets `*exit_code` to 1 when one is absent.
void PrintAnswers(const Answer& answer, const std::vector<std::string>& keys, size_t first, const LookupShape& shape,
                  LookupWriter& writer, int* exit_code) {
  std::vector<FieldValue> fields;  // one found answer's shown fields, as a Row carries them
  size_t key = first;
  for (const WireAnswer& one : answer.wire.answers) {
    int64_t number = 0;
    if (shape.number_keys) (void)ParseInt64(keys[key], &number);  // the node parsed it already
    if (one.found) {
      Row row;
      row.value = Bytes(one.value);
      row.session_start_ms = one.start_ms;
      row.session_end_ms = one.end_ms;
      if (!shape.shown.empty()) {  // decoded as RowField::kOwn at their positions (lookup_wire.h)
        const auto begin = answer.wire.fields.begin() + static_cast<std::ptrdiff_t>(one.first_field);
        fields.assign(begin, begin + static_cast<std::ptrdiff_t>(shape.shown.size()));
        row.own_fields = fields.data();
        row.own_field_count = static_cast<uint32_t>(fields.size());
      }
      writer.Found(keys[key], number, row);
    } else {
      *exit_code = kExitNotFound;
      writer.Missing(keys[key], number);
    }
    ++key;
  }
}

// `lookup --remote --keys-from -`: the keys after MAP, then standard input in batches as they arrive
// (key_stream.h), each batch asked and its answers printed and flushed before the next is read, so that a
// program writing keys gets each answer while it waits. One output for the whole stream (one JSON array, one
// csv header, KEY<TAB>VALUE lines even for one key: a stream of keys is several), as the local command prints
// for the same keys. An error ends it with exit 2: answers already printed stay printed.
int RunStreamedRemoteLookup(RemoteReader& reader, const protocol::ReadRequest& head, const CommandLine& cli,
                            LookupFormat format, const std::optional<Wait>& wait, std::ostream& out,
                            std::ostream& err) {
  const std::string& map = head.map;
  KeyStream stream(STDIN_FILENO, "standard input");
  std::vector<std::string> keys(cli.args.begin() + 1, cli.args.end());
  std::unique_ptr<LookupWriter> writer;
  WireAnswers first_shape;
  std::string first_node;
  int exit_code = kExitOk;
  bool waited = !wait.has_value();
  for (bool end = false; !end;) {
    const Status read = stream.Next(&keys, nullptr, &end);
    if (!read.ok()) {
      err << "planb: " << read.message() << "\n";
      return kExitError;
    }
    if (keys.empty()) continue;
    size_t first = 0;
    for (const protocol::ReadRequest& request : SplitLookupRequest(head, keys)) {
      Answer answer;
      bool fresh = true;
      // Only the first READ waits for --min-version: once the node has it, every later answer has it too.
      const Status s = AskFresh(reader, request, waited ? std::nullopt : wait, &answer, &fresh);
      waited = true;
      if (!s.ok()) {
        err << "planb: " << s.message() << "\n";
        return kExitError;
      }
      if (!Usable(answer, map, wait, fresh, err)) return kExitError;
      if (writer == nullptr) {
        first_shape = answer.wire;
        first_node = answer.node;
        writer = LookupWriter::Create(format, ShapeOf(answer.wire, /*single=*/false), out);
      } else if (!SameShape(answer.wire, first_shape)) {
        err << "planb: storage nodes " << first_node << " and " << answer.node << " answer lookups of " << map
            << " in different shapes (is the map configured alike on every node?)\n";
        return kExitError;
      }
      PrintAnswers(answer, keys, first, ShapeOf(first_shape, false), *writer, &exit_code);
      err.write(answer.err.data(), static_cast<std::streamsize>(answer.err.size()));
      first += request.keys.size();
    }
    out.flush();
    err.flush();
    keys.clear();
  }
  if (writer == nullptr) {
    err << "planb: lookup: no KEY given (give keys after MAP, or --keys-from FILE)\n";
    return kExitError;
  }
  writer->Finish();
  return exit_code;
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

  zmq::context_t context;
  RemoteReader reader(context, cluster);  // one connection per node for every READ below, waits included
  if (cli.keys_from && *cli.keys_from == "-") return RunStreamedRemoteLookup(reader, head, cli, format, wait, out, err);

  std::vector<std::string> keys;
  if (!CollectLookupKeys(cli, &keys, err)) return kExitError;
  const std::vector<protocol::ReadRequest> requests = SplitLookupRequest(head, keys);
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
  // As the local command: an error leaves stdout empty and says only what is wrong.
  if (!go_on) {
    (void)Usable(answers.back(), map, wait, fresh, err);  // the node's error, or the version that never came
    return kExitError;
  }
  for (const Answer& answer : answers) {
    if (!Usable(answer, map, wait, true, err)) return kExitError;
    if (!SameShape(answer.wire, answers.front().wire)) {
      err << "planb: storage nodes " << answers.front().node << " and " << answer.node << " answer lookups of "
          << map << " in different shapes (is the map configured alike on every node?)\n";
      return kExitError;
    }
  }
  LookupShape shape = ShapeOf(answers.front().wire, keys.size() == 1);
  for (const Answer& answer : answers) {
    shape.batches = std::min(shape.batches, answer.wire.batches);  // --format wire: the oldest part's version
  }
  int exit_code = kExitOk;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(format, shape, out);
  size_t first = 0;
  for (const Answer& answer : answers) {
    PrintAnswers(answer, keys, first, shape, *writer, &exit_code);
    first += answer.wire.answers.size();
  }
  writer->Finish();
  for (const Answer& answer : answers) err.write(answer.err.data(), static_cast<std::streamsize>(answer.err.size()));
  return exit_code;
}

}  // namespace planb
