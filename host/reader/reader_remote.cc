// Reader::Impl's remote mode (ReaderOptions::remote): lookups become READs in format 6 (answers,
// host/commands/lookup_answers.h) over the connections of the Reader's RemotePool, and their answers become
// LookupResults viewing the calling thread's RemoteScratch.
#include <algorithm>
#include <string>

#include "host/commands/read_commands.h"
#include "host/reader/reader_impl.h"
#include "host/reader/remote_scratch.h"

namespace planb {
namespace {

LookupResult Failure(Code code, const char* message) {
  LookupResult result;
  result.code = code;
  result.error = message;
  return result;
}

// A node's stderr as one message: without the program's "planb: " prefix and the newline.
std::string NodeMessage(const std::string& err) {
  std::string message = err;
  if (message.rfind("planb: ", 0) == 0) message.erase(0, 7);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  return message.empty() ? std::string("failed with no message") : message;
}

}  // namespace

RemoteScratch& Reader::Impl::RemoteScratchOf(const MapSlot& slot, MapContext** context) {
  MapContext* ctx = FindThreadContext(serial_, slot.index());
  if (ctx == nullptr) ctx = AddThreadContext(serial_, slot.index(), contexts_);
  if (ctx->remote == nullptr) ctx->remote = std::make_unique<RemoteScratch>();
  *context = ctx;
  RemoteScratch& scratch = *ctx->remote;
  scratch.replies_used = 0;  // the views of the thread's last call end here
  scratch.errors.clear();
  return scratch;
}

Status Reader::Impl::AskRemote(const MapSlot& slot, RemoteScratch& scratch, const protocol::ReadRequest& request,
                               const size_t* positions, LookupResult* results, LookupTotals* tally,
                               Code* first_error) {
  const size_t n = request.keys.size();
  RemoteReply& reply = scratch.NextReply();
  int exit_code = kExitError;
  Status s;
  {
    RemotePool::Lease lease = remote_->Take();
    s = lease.reader().Read(request, &exit_code, &reply.out, &reply.err, &reply.node);
  }
  const PluginDescriptor& type = slot.plugins().type_descriptor();
  if (s.ok() && (exit_code == kExitOk || exit_code == kExitNotFound)) {
    s = DecodeLookupAnswers(reply.out, n, &reply.answers).WithContext("storage node " + reply.node);
    if (s.ok() && reply.answers.no_data) {
      s = Status(Code::kNoData, "map '" + slot.name() + "' has no data on storage node " + reply.node +
                                    ": nothing was merged into it there yet");
    }
    for (const OwnFieldSlot& f : reply.answers.own) {
      if (s.ok() && f.position >= type.field_count) {
        s = Status(Code::kCorruption, "storage node " + reply.node + " answered map '" + slot.name() +
                                          "' with a field at position " + std::to_string(f.position) + ", but type " +
                                          type.name + " has " + std::to_string(type.field_count) +
                                          " fields here (is its plugin another version there?)");
      }
    }
  } else if (s.ok()) {
    s = Status(Code::kIOError, "storage node " + reply.node + ": " + NodeMessage(reply.err));
  }
  if (!s.ok()) {
    scratch.errors.push_back(s.message());
    const LookupResult failed = Failure(s.code(), scratch.errors.back().c_str());
    for (size_t k = 0; k < n; ++k) results[positions[k]] = failed;
    tally->errors += n;
    if (*first_error == Code::kOk) *first_error = s.code();
    return s;
  }
  remote_facts_[slot.index()].Note(reply.answers.batches);
  const size_t row_fields = reply.answers.own.empty() ? 0 : type.field_count;
  if (reply.rows.size() < n * row_fields) reply.rows.resize(n * row_fields);
  for (size_t k = 0; k < n; ++k) {
    const LookupAnswer& a = reply.answers.answers[k];
    LookupResult& r = results[positions[k]];
    r = LookupResult();
    if (a.kind == LookupAnswer::Kind::kAbsent) {
      ++tally->misses;
    } else if (a.kind == LookupAnswer::Kind::kRefused) {
      scratch.errors.emplace_back(a.message);
      r.code = a.code;
      r.error = scratch.errors.back().c_str();
      ++tally->errors;
      if (*first_error == Code::kOk) *first_error = a.code;
    } else {
      r.code = Code::kOk;
      r.value = Bytes(a.value);
      r.value_type = a.value_type;
      r.session_start_ms = a.start_ms;
      r.session_end_ms = a.end_ms;
      if (row_fields != 0) {
        FieldValue* row = reply.rows.data() + k * row_fields;
        std::fill(row, row + row_fields, FieldValue());
        for (size_t j = 0; j < reply.answers.own.size(); ++j) {
          row[reply.answers.own[j].position] = reply.answers.fields[a.first_field + j];
        }
        r.fields = row;
        r.field_count = static_cast<uint32_t>(row_fields);
      }
      ++tally->found;
    }
  }
  return Status::Ok();
}

Code Reader::Impl::LookupManyRemote(MapSlot& slot, const ReaderKey* keys, size_t count, LookupResult* results) {
  MapContext* ctx = nullptr;
  RemoteScratch& scratch = RemoteScratchOf(slot, &ctx);
  const bool number_keys = slot.number_keys();
  LookupTotals tally;
  Code first_error = Code::kOk;
  // Keys of the wrong kind fail here, as in process; the others are grouped by the instant they ask about (a
  // READ carries one).
  for (size_t g = 0; g < scratch.groups_used; ++g) scratch.groups[g].positions.clear();
  scratch.groups_used = 0;
  for (size_t i = 0; i < count; ++i) {
    const ReaderKey& key = keys[i];
    const char* wrong = nullptr;
    if (number_keys ? !key.key.empty() : key.number != 0) {
      wrong = number_keys ? slot.text_key_error() : slot.number_key_error();
    } else if (!key.time.is_now() && !slot.uses_time()) {
      wrong = slot.time_error();
    }
    if (wrong != nullptr) {
      results[i] = Failure(Code::kInvalidArgument, wrong);
      if (first_error == Code::kOk) first_error = Code::kInvalidArgument;
      ++tally.errors;
      continue;
    }
    size_t g = 0;
    while (g < scratch.groups_used && !(scratch.groups[g].now == key.time.is_now() &&
                                        (key.time.is_now() || scratch.groups[g].ms == key.time.ms()))) {
      ++g;
    }
    if (g == scratch.groups_used) {
      if (g == scratch.groups.size()) scratch.groups.emplace_back();
      scratch.groups[g].now = key.time.is_now();
      scratch.groups[g].ms = key.time.is_now() ? 0 : key.time.ms();
      ++scratch.groups_used;
    }
    scratch.groups[g].positions.push_back(i);
  }
  protocol::ReadRequest head;
  head.kind = protocol::ReadKind::kLookup;
  head.map = slot.name();
  head.format = protocol::ReadFormat::kAnswers;
  head.quiet = true;
  for (size_t g = 0; g < scratch.groups_used; ++g) {
    const RemoteScratch::Group& group = scratch.groups[g];
    head.time_ms.reset();
    if (!group.now) head.time_ms = group.ms;
    scratch.key_texts.resize(group.positions.size());
    for (size_t k = 0; k < group.positions.size(); ++k) {
      const ReaderKey& key = keys[group.positions[k]];
      if (number_keys) {
        scratch.key_texts[k] = std::to_string(key.number);
      } else {
        scratch.key_texts[k].assign(key.key.data(), key.key.size());
      }
    }
    size_t done = 0;
    for (const protocol::ReadRequest& request : SplitLookupRequest(head, scratch.key_texts)) {
      (void)AskRemote(slot, scratch, request, group.positions.data() + done, results, &tally, &first_error);
      done += request.keys.size();
    }
  }
  ctx->counters.Add(tally);
  return first_error;
}

LookupResult Reader::Impl::LookupOneRemote(MapSlot& slot, const LookupKey& lookup, bool number_key,
                                           LookupTime time) {
  ReaderKey key;
  if (number_key) {
    key.number = lookup.number;
  } else {
    key.key = lookup.key.view();
  }
  key.time = time;
  LookupResult result;
  (void)LookupManyRemote(slot, &key, 1, &result);
  return result;
}

Status Reader::Impl::PrepareRemote(const MapSlot& slot) {
  MapContext* ctx = nullptr;
  RemoteScratch& scratch = RemoteScratchOf(slot, &ctx);
  // Any key does: what Prepare needs to know is that a node answers for the map (a key the map refuses is
  // answered too), not the answer. Not counted as a lookup.
  protocol::ReadRequest probe;
  probe.kind = protocol::ReadKind::kLookup;
  probe.map = slot.name();
  probe.format = protocol::ReadFormat::kAnswers;
  probe.quiet = true;
  probe.keys = {"0"};
  const size_t position = 0;
  LookupResult result;
  LookupTotals uncounted;
  Code first_error = Code::kOk;
  return AskRemote(slot, scratch, probe, &position, &result, &uncounted, &first_error);
}

}  // namespace planb
