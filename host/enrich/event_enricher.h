// `planb enrich`'s engine: reads events (JSON lines or CSV rows), asks their lookups of the Reader a batch at a
// time (lookup_batch.h), writes each event with its answers, and counts what happened (enrich_counts.h).
//   JSON lines: each line must be one JSON object, checked in full (json_line_checker.h); the answer goes to the
//     TARGET path, creating parent objects; every byte it does not replace stays as it came.
//   CSV (RFC 4180, a header line): FIELD, TIMEFIELD and TARGET are columns; a TARGET the header lacks becomes a
//     new last column. CSV rows may be written as JSON objects of their columns (--output json).
// A malformed event (not one JSON object; a CSV row with another number of fields than the header) passes
// through unchanged with a warning (the first few are shown, all are counted); with `strict` it stops the run
// with an error naming the input and line. Misses follow EnrichSpec::on_miss.
// Thread-safety: one per thread (it holds a LookupBatch and its buffers).
#pragma once

#include <functional>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "host/enrich/enrich_counts.h"
#include "host/enrich/enrich_spec.h"
#include "host/common/json_line_checker.h"
#include "host/common/line_source.h"
#include "host/enrich/lookup_batch.h"
#include "planb/reader.h"

namespace planb {

class EventEnricher {
 public:
  // `infos[j]` describes spec.lookups[j].map (Reader::Describe). Warnings go to `warnings`.
  // REQUIRES: `reader` and `spec` outlive this.
  EventEnricher(Reader* reader, const EnrichSpec& spec, std::vector<MapInfo> infos, std::ostream& warnings);

  // Enriches every event of `in` (named `name` in messages) onto `out`. Errors: --strict on a malformed event,
  // a read or write failure, a map failing (lookup_batch.h).
  // Each batch is written and flushed as soon as it is done.
  Status Run(ByteSource& in, const std::string& name, std::ostream& out);

  const EnrichCounts& counts() const { return counts_; }
  // Called after each batch with the events read so far (a progress line on a terminal); may be empty.
  void set_progress(std::function<void(uint64_t)> progress) { progress_ = std::move(progress); }

 private:
  Status RunJson(ByteSource& in, const std::string& name, std::ostream& out);
  Status RunCsv(ByteSource& in, const std::string& name, std::ostream& out);
  // A malformed event: counted, warned about (the first few), or with --strict the error to stop with.
  // The message is `what` + `detail` + `end`, built only when it is shown or returned.
  Status Malformed(const std::string& name, uint64_t line, std::string_view what, std::string_view detail = "",
                   std::string_view end = "");
  // Event e's lookup j asks `raw` (a JSON value's text, or a CSV cell when `cell`): its key and time.
  void AskJson(size_t e, size_t j, std::string_view line);
  // The same from the document the checker parsed (faster: simdjson's tape skips what lies between), noting
  // whether the target's first member is absent, so that writing it needs no scan of the line.
  void AskFromDocument(size_t e, size_t j, std::string_view line);
  // The key a JSON value gives: a string's text, a number as written; false for the rest (objects, true...).
  bool KeyOf(std::string_view raw, std::string* scratch, std::string_view* key) const;
  // Writes event e's answers into the JSON text `line`, appending the result (and '\n') to out_; or nothing
  // when the event is dropped.
  void WriteJson(size_t e, std::string_view line);
  // Counts event e's answers and fills cell_answers_, cell_written_, misses_; false when it is dropped.
  bool AnswerRow(size_t e, bool json);
  // Writes what AnswerRow found into the JSON object text `json` (not in edit_ or edited_) and appends the result
  // to out_. `known_heads`: head_absent_ holds what the event's parsed document said (else the text is read).
  void WriteAnswersJson(size_t e, std::string_view json, bool known_heads);
  // CSV (csv_enricher.cc): the columns of the header, asking a row's lookups, its answers, writing it.
  void LayOutCsv(const std::vector<std::string>& header);
  void AskCsv(size_t e, const std::string_view* cells);
  void WriteCsvRow(size_t e, const std::string_view* cells, size_t count);
  void WriteCsvRowAsJson(size_t e, const std::string_view* cells);

  struct CsvRow {
    size_t first;   // its first cell in CsvState::cells
    size_t count;   // its number of fields
    uint64_t line;  // where it starts
  };
  struct CsvState {
    std::vector<std::string> header;
    std::vector<std::string> columns;  // written: the header's, then new targets, then planb_miss
    std::vector<int> field, time, target;  // per lookup: column of FIELD / TIMEFIELD in the header (-1: none),
                                           // of TARGET in `columns`
    int miss = -1;                         // the planb_miss column (--on-miss tag)
    std::string arena;                     // the batch's cells, back to back
    std::vector<std::pair<size_t, size_t>> cells;
    std::vector<std::string_view> views;
    std::vector<CsvRow> rows;
    std::string json;                      // a row as a JSON object (--output json)
  };

  Reader* reader_;
  const EnrichSpec& spec_;
  std::ostream& warnings_;
  LookupBatch batch_;
  JsonLineChecker checker_;
  EnrichCounts counts_;
  // Reused batch to batch: nothing allocated per event once warm.
  std::vector<std::string_view> lines_;
  std::vector<char> valid_;
  std::vector<std::string> key_scratch_;  // events x lookups: keys unescaped from JSON strings
  std::vector<char> skipped_;             // events x lookups: no time, not asked
  std::vector<char> head_absent_;         // events x lookups: the target's first member is not in the event
  std::vector<JsonPath> heads_;           // per lookup: its target's first member
  std::vector<char> head_shared_;         // per lookup: an earlier lookup's target starts with the same member
  std::string time_scratch_;
  std::string edit_;
  std::string edited_;
  std::string out_;
  std::string why_;
  std::function<void(uint64_t)> progress_;
  CsvState csv_;
  std::vector<std::string> cell_answers_;  // per lookup, the row being written
  std::string member_scratch_;             // a #MEMBER string's unescaped text
  std::vector<char> cell_written_;
  std::string misses_;
};

}  // namespace planb
