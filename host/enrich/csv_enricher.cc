// EventEnricher over CSV (event_enricher.h): RFC 4180 rows with a header line, answers in columns (or in JSON
// objects of the columns with --output json).
#include <charconv>
#include <cstdio>

#include "host/common/csv.h"
#include "host/common/iso_time.h"
#include "host/enrich/answer_text.h"
#include "host/enrich/event_enricher.h"
#include "host/common/json_text.h"

namespace planb {

namespace {

constexpr size_t kBatchRows = 256;
constexpr char kMissColumn[] = "planb_miss";

int ColumnOf(const std::vector<std::string>& header, const std::string& name) {
  for (size_t c = 0; c < header.size(); ++c) {
    if (header[c] == name) return static_cast<int>(c);  // the first of repeated names, as in JSON
  }
  return -1;
}

}  // namespace

void EventEnricher::LayOutCsv(const std::vector<std::string>& header) {
  csv_.header = header;
  csv_.columns = header;  // the output's: the input's, then the targets it lacks, then planb_miss
  csv_.field.clear();
  csv_.time.clear();
  csv_.target.clear();
  for (const EnrichLookup& lookup : spec_.lookups) {
    csv_.field.push_back(ColumnOf(header, lookup.field.text));
    csv_.time.push_back(lookup.time_field ? ColumnOf(header, lookup.time_field->text) : -1);
    int target = ColumnOf(csv_.columns, lookup.target.text);
    if (target < 0) {
      csv_.columns.push_back(lookup.target.text);
      target = static_cast<int>(csv_.columns.size()) - 1;
    }
    csv_.target.push_back(target);
  }
  csv_.miss = -1;
  if (spec_.on_miss == OnMiss::kTag) {
    csv_.miss = ColumnOf(csv_.columns, kMissColumn);
    if (csv_.miss < 0) {
      csv_.columns.push_back(kMissColumn);
      csv_.miss = static_cast<int>(csv_.columns.size()) - 1;
    }
  }
}

void EventEnricher::AskCsv(size_t e, const std::string_view* cells) {
  for (size_t j = 0; j < spec_.lookups.size(); ++j) {
    const size_t slot = e * spec_.lookups.size() + j;
    LookupTime time = LookupTime::Now();
    if (spec_.lookups[j].time_field) {
      int64_t ms = 0;
      if (csv_.time[j] < 0 || !ParseTimeOrEpoch(cells[csv_.time[j]], spec_.time_unit, &ms)) {
        skipped_[slot] = 1;
        continue;
      }
      time = LookupTime::At(ms);
    }
    if (csv_.field[j] >= 0) batch_.Ask(e, j, cells[csv_.field[j]], time);  // a column the header lacks: a miss
  }
}

void EventEnricher::WriteCsvRow(size_t e, const std::string_view* cells, size_t count) {
  if (!AnswerRow(e, false)) return;
  const std::string_view none;
  for (size_t c = 0; c < csv_.columns.size(); ++c) {
    if (c > 0) out_.push_back(',');
    const std::string* answer = nullptr;
    for (size_t j = 0; j < spec_.lookups.size(); ++j) {
      if (csv_.target[j] == static_cast<int>(c) && cell_written_[j]) answer = &cell_answers_[j];
    }
    if (answer != nullptr) {
      AppendCsvField(*answer, &out_);
    } else if (static_cast<int>(c) == csv_.miss && spec_.on_miss == OnMiss::kTag) {
      AppendCsvField(misses_, &out_);
    } else {
      AppendCsvField(c < count ? cells[c] : none, &out_);
    }
  }
  out_.append("\r\n");  // RFC 4180's line end
}

void EventEnricher::WriteCsvRowAsJson(size_t e, const std::string_view* cells) {
  if (!AnswerRow(e, true)) return;
  csv_.json.assign("{");
  for (size_t c = 0; c < csv_.header.size(); ++c) {
    if (c > 0) csv_.json.push_back(',');
    AppendJsonString(csv_.header[c], &csv_.json);
    csv_.json.push_back(':');
    AppendJsonString(cells[c], &csv_.json);
  }
  csv_.json.push_back('}');
  WriteAnswersJson(e, csv_.json, false);  // no parsed document: targets are looked for in the text
}

Status EventEnricher::RunCsv(ByteSource& in, const std::string& name, std::ostream& out) {
  CsvReader reader(in, name);
  std::vector<std::string_view> fields;
  bool got = false;
  Status s = reader.Next(&fields, &got);
  if (!s.ok() || !got) return s;  // no header: no events
  LayOutCsv(std::vector<std::string>(fields.begin(), fields.end()));
  const bool json = spec_.output == EventFormat::kJson;
  if (!json) {
    out_.clear();
    for (size_t c = 0; c < csv_.columns.size(); ++c) {
      if (c > 0) out_.push_back(',');
      AppendCsvField(csv_.columns[c], &out_);
    }
    out_.append("\r\n");
    out.write(out_.data(), static_cast<std::streamsize>(out_.size()));
  }
  const size_t per_event = spec_.lookups.size();
  Status stop;
  while (stop.ok()) {
    // A batch of rows, copied out of the reader (its views last one record) into one arena.
    csv_.arena.clear();
    csv_.cells.clear();
    csv_.rows.clear();
    while (csv_.rows.size() < kBatchRows) {
      stop = reader.Next(&fields, &got);
      if (!stop.ok() || !got) break;
      csv_.rows.push_back(CsvRow{csv_.cells.size(), fields.size(), reader.line()});
      for (std::string_view f : fields) {
        csv_.cells.emplace_back(csv_.arena.size(), f.size());
        csv_.arena.append(f);
      }
    }
    if (csv_.rows.empty()) break;
    const size_t n = csv_.rows.size();
    csv_.views.resize(csv_.cells.size());
    for (size_t i = 0; i < csv_.cells.size(); ++i) {
      csv_.views[i] = std::string_view(csv_.arena).substr(csv_.cells[i].first, csv_.cells[i].second);
    }
    valid_.assign(n, 0);
    skipped_.assign(n * per_event, 0);
    batch_.Start(n);
    size_t usable = n;
    for (size_t e = 0; e < n; ++e) {
      const CsvRow& row = csv_.rows[e];
      if (row.count != csv_.header.size()) {
        char counts[64];  // on the stack: a malformed row costs no allocation unless its warning is shown
        const int size = std::snprintf(counts, sizeof(counts), "%zu fields, the header has %zu", row.count,
                                       csv_.header.size());
        Status bad = Malformed(name, row.line, std::string_view(counts, static_cast<size_t>(size)),
                               json ? " (not written: its fields have no names)" : "");
        if (!bad.ok()) {
          usable = e;
          stop = bad;
          break;
        }
        continue;
      }
      valid_[e] = 1;
      AskCsv(e, &csv_.views[row.first]);
    }
    s = batch_.Run();
    if (!s.ok()) return s;
    out_.clear();
    for (size_t e = 0; e < usable; ++e) {
      const CsvRow& row = csv_.rows[e];
      const std::string_view* cells = &csv_.views[row.first];
      if (valid_[e]) {
        if (json) {
          WriteCsvRowAsJson(e, cells);
        } else {
          WriteCsvRow(e, cells, row.count);
        }
      } else if (!json) {  // passed through with its own fields
        for (size_t c = 0; c < row.count; ++c) {
          if (c > 0) out_.push_back(',');
          AppendCsvField(cells[c], &out_);
        }
        out_.append("\r\n");
      }
    }
    counts_.events += usable + (stop.ok() || usable == n ? 0 : 1);
    out.write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out.flush();
    if (!out) return Status::IOError("writing the enriched events failed");
  }
  return stop;
}

}  // namespace planb
