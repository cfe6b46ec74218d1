#include "host/enrich/event_enricher.h"

#include <charconv>

#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/enrich/answer_text.h"
#include "host/common/json_text.h"
#include "host/common/line_source.h"

namespace planb {

namespace {

constexpr size_t kBatchEvents = 256;
constexpr uint64_t kWarningsShown = 10;

bool IsNumberStart(char c) { return c == '-' || (c >= '0' && c <= '9'); }

}  // namespace

EventEnricher::EventEnricher(Reader* reader, const EnrichSpec& spec, std::vector<MapInfo> infos,
                             std::ostream& warnings)
    : reader_(reader), spec_(spec), warnings_(warnings), batch_(reader, spec.lookups, std::move(infos)) {
  counts_.lookups.resize(spec.lookups.size());
  cell_answers_.resize(spec.lookups.size());
  cell_written_.resize(spec.lookups.size());
  for (size_t j = 0; j < spec.lookups.size(); ++j) {
    const std::string& head = spec.lookups[j].target.parts[0];
    heads_.push_back(JsonPath{head, {head}});
    bool shared = false;
    for (size_t k = 0; k < j; ++k) shared |= spec.lookups[k].target.parts[0] == head;
    head_shared_.push_back(shared);
  }
}

Status EventEnricher::Run(ByteSource& in, const std::string& name, std::ostream& out) {
  return spec_.input == EventFormat::kJson ? RunJson(in, name, out) : RunCsv(in, name, out);
}

Status EventEnricher::Malformed(const std::string& name, uint64_t line, std::string_view what,
                                std::string_view detail, std::string_view end) {
  ++counts_.malformed;
  if (!spec_.strict && counts_.malformed > kWarningsShown) return Status::Ok();  // counted only: builds nothing
  std::string why = LogValue(name) + ":" + std::to_string(line) + ": ";
  why.append(what).append(detail).append(end);
  if (spec_.strict) return Status::Invalid(why);
  warnings_ << "planb enrich: warning: " << why << "; passed through unchanged"
            << (counts_.malformed == kWarningsShown ? " (further malformed events are counted, not shown)" : "")
            << "\n";
  return Status::Ok();
}

bool EventEnricher::KeyOf(std::string_view raw, std::string* scratch, std::string_view* key) const {
  if (raw.empty()) return false;
  if (raw[0] == '"') {
    *key = JsonStringText(raw, scratch);
    return true;
  }
  if (!IsNumberStart(raw[0])) return false;
  *key = raw;
  return true;
}

void EventEnricher::AskJson(size_t e, size_t j, std::string_view line) {
  const EnrichLookup& lookup = spec_.lookups[j];
  const size_t slot = e * spec_.lookups.size() + j;
  LookupTime time = LookupTime::Now();
  if (lookup.time_field) {
    std::string_view raw;
    std::string_view text;
    int64_t ms = 0;
    if (!FindJsonValue(line, *lookup.time_field, &raw) || !KeyOf(raw, &time_scratch_, &text) ||
        !ParseTimeOrEpoch(text, spec_.time_unit, &ms)) {
      skipped_[slot] = 1;
      return;
    }
    time = LookupTime::At(ms);
  }
  std::string_view raw;
  std::string_view key;
  if (!FindJsonValue(line, lookup.field, &raw) || !KeyOf(raw, &key_scratch_[slot], &key)) return;  // a miss
  batch_.Ask(e, j, key, time);
}

void EventEnricher::AskFromDocument(size_t e, size_t j, std::string_view line) {
  const EnrichLookup& lookup = spec_.lookups[j];
  const size_t slot = e * spec_.lookups.size() + j;
  std::string_view text;
  head_absent_[slot] = checker_.Find(heads_[j], &text) == JsonFind::kAbsent;
  LookupTime time = LookupTime::Now();
  if (lookup.time_field) {
    const JsonFind found = checker_.Find(*lookup.time_field, &text);
    int64_t ms = 0;
    if (found == JsonFind::kNumber) (void)FindJsonValue(line, *lookup.time_field, &text);
    if ((found != JsonFind::kString && found != JsonFind::kNumber) || !ParseTimeOrEpoch(text, spec_.time_unit, &ms)) {
      skipped_[slot] = 1;
      return;
    }
    time = LookupTime::At(ms);
  }
  switch (checker_.Find(lookup.field, &text)) {
    case JsonFind::kString:
      key_scratch_[slot].assign(text);  // the document's strings go with the next line's parse
      batch_.Ask(e, j, key_scratch_[slot], time);
      return;
    case JsonFind::kNumber:
      if (FindJsonValue(line, lookup.field, &text)) batch_.Ask(e, j, text, time);  // as written: 1.50 stays 1.50
      return;
    default:
      return;  // absent, or not a key (an object, true...): a miss
  }
}

// Event e's answers, counted: per lookup the JSON value (`json`) or CSV cell text to write in cell_answers_[j],
// cell_written_[j] saying whether there is one, and with --on-miss tag the targets that missed in misses_ (a JSON
// array, or names separated by spaces). False when the event is dropped.
bool EventEnricher::AnswerRow(size_t e, bool json) {
  const size_t per_event = spec_.lookups.size();
  bool missed = false;
  misses_.clear();
  for (size_t j = 0; j < per_event; ++j) {
    const size_t slot = e * per_event + j;
    LookupCounts& c = counts_.lookups[j];
    cell_answers_[j].clear();
    cell_written_[j] = 0;
    if (skipped_[slot]) {
      ++c.skipped;
      continue;
    }
    const LookupResult* r = batch_.Answer(e, j);
    const std::optional<JsonPath>& member = spec_.lookups[j].member;
    if (r != nullptr && !member) {
      ++c.hits;
      if (json) {
        AppendAnswerJson(batch_.info(j), *r, &cell_answers_[j]);
      } else {
        AppendAnswerCell(batch_.info(j), *r, &cell_answers_[j]);
      }
      cell_written_[j] = 1;
      continue;
    }
    if (r != nullptr) {
      std::string_view raw;
      if (r->value_type == ValueType::kJson && FindJsonValue(r->value.view(), *member, &raw)) {
        ++c.hits;
        if (json || raw[0] != '"') {
          cell_answers_[j].assign(raw);  // JSON as it is; a CSV cell takes a number's text as written
        } else {
          cell_answers_[j].assign(JsonStringText(raw, &member_scratch_));
        }
        cell_written_[j] = 1;
        continue;
      }
      ++c.no_member;  // found, but not with that member: a miss for this target
    }
    ++c.misses;
    if (spec_.lookups[j].fallback) {
      ++c.fallbacks;
      if (json) {
        AppendJsonString(*spec_.lookups[j].fallback, &cell_answers_[j]);
      } else {
        cell_answers_[j] = *spec_.lookups[j].fallback;
      }
      cell_written_[j] = 1;
      continue;
    }
    missed = true;
    if (spec_.on_miss != OnMiss::kTag) continue;
    if (json) {
      misses_.push_back(misses_.empty() ? '[' : ',');
      AppendJsonString(spec_.lookups[j].target.text, &misses_);
    } else {
      if (!misses_.empty()) misses_.push_back(' ');
      misses_ += spec_.lookups[j].target.text;
    }
  }
  if (missed && spec_.on_miss == OnMiss::kDrop) {
    ++counts_.dropped;
    return false;
  }
  if (json && !misses_.empty()) misses_.push_back(']');
  return true;
}

void EventEnricher::WriteAnswersJson(size_t e, std::string_view json, bool known_heads) {
  // Each write reads the text so far and writes into the other buffer: no copy of an event that gets no write.
  std::string_view current = json;
  std::string* buffers[2] = {&edit_, &edited_};
  int next = 0;
  const auto write = [&](const JsonPath& path, std::string_view value, bool head_absent) {
    buffers[next]->clear();
    JsonWrite written = JsonWrite::kInserted;
    if (head_absent) {
      InsertAtTopLevelEnd(current, path, value, buffers[next]);
    } else {
      written = WriteJsonValue(current, path, value, buffers[next]);
    }
    current = *buffers[next];
    next ^= 1;
    return written;
  };
  const size_t per_event = spec_.lookups.size();
  for (size_t j = 0; j < per_event; ++j) {
    if (!cell_written_[j]) continue;
    const bool head_absent = known_heads && head_absent_[e * per_event + j] && !head_shared_[j];
    if (write(spec_.lookups[j].target, cell_answers_[j], head_absent) == JsonWrite::kBlocked) {
      ++counts_.lookups[j].blocked;
    }
  }
  if (!misses_.empty()) {
    static const JsonPath kMissPath{"planb_miss", {"planb_miss"}};
    (void)write(kMissPath, misses_, false);  // the top level is an object: never blocked
  }
  out_.append(current);
  out_.push_back('\n');
}

void EventEnricher::WriteJson(size_t e, std::string_view line) {
  if (AnswerRow(e, true)) WriteAnswersJson(e, line, true);
}

Status EventEnricher::RunJson(ByteSource& in, const std::string& name, std::ostream& out) {
  LineSource source(in, name, JsonLineChecker::Padding());
  const size_t per_event = spec_.lookups.size();
  for (;;) {
    Status s = source.Next(kBatchEvents, &lines_);
    if (!s.ok()) return s;
    if (lines_.empty()) return Status::Ok();
    size_t n = lines_.size();
    valid_.assign(n, 0);
    skipped_.assign(n * per_event, 0);
    head_absent_.assign(n * per_event, 0);
    if (key_scratch_.size() < n * per_event) key_scratch_.resize(n * per_event);
    batch_.Start(n);
    Status stop;  // --strict: the events before the malformed one are still written
    for (size_t e = 0; e < n; ++e) {
      if (!checker_.Check(lines_[e], true, &why_)) {
        stop = Malformed(name, source.first_line() + e, "not a JSON object (", why_, ")");
        if (!stop.ok()) {
          n = e;
          break;
        }
        continue;
      }
      valid_[e] = 1;
      for (size_t j = 0; j < per_event; ++j) {
        if (checker_.has_document()) {
          AskFromDocument(e, j, lines_[e]);
        } else {
          AskJson(e, j, lines_[e]);
        }
      }
    }
    s = batch_.Run();
    if (!s.ok()) return s;
    out_.clear();
    for (size_t e = 0; e < n; ++e) {
      if (valid_[e]) {
        WriteJson(e, lines_[e]);
      } else {
        out_.append(lines_[e]);
        out_.push_back('\n');
      }
    }
    counts_.events += n + (stop.ok() ? 0 : 1);  // the malformed line that stopped --strict was read too
    out.write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out.flush();  // downstream sees each batch now, not when a buffer fills
    if (!out) return Status::IOError("writing the enriched events failed");
    if (progress_) progress_(counts_.events);
    if (!stop.ok()) return stop;
  }
}

}  // namespace planb
