// CSV rows for tabular_reader: the header (or --columns) resolves each named column to its index once; every
// record must then have exactly as many fields.
#include <string>
#include <vector>

#include "host/common/csv.h"
#include "host/ingest/tabular_rows.h"

namespace planb {
namespace {

constexpr size_t kAbsent = static_cast<size_t>(-1);

std::string ListColumns(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + QuoteText(name);
  return list;
}

}  // namespace

Status ReadCsvRows(std::istream& in, TabularRows* rows) {
  const TabularSpec& spec = rows->spec();
  CsvReader reader(in, rows->name(), spec.max_record_bytes);
  reader.SkipCommentLines(spec.comments);
  std::vector<std::string_view> fields;
  bool got = false;
  std::vector<std::string> names = spec.columns;
  const bool header = names.empty();
  if (header) {
    PLANB_RETURN_IF_ERROR(reader.Next(&fields, &got));
    if (!got) return Status::Invalid(rows->name() + ": no header line (name the columns with --columns A,B,C)");
    names.assign(fields.begin(), fields.end());
  }
  const std::string source = header ? "the header has" : "--columns names";
  auto index_of = [&](const std::optional<std::string>& column, const char* flag, size_t* index) {
    *index = kAbsent;
    if (!column) return Status::Ok();
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == *column) {
        *index = i;
        return Status::Ok();
      }
    }
    return Status::Invalid(rows->name() + ": " + flag + " " + QuoteText(*column) + ": no such column (" + source + " " +
                           ListColumns(names) + ")");
  };
  size_t key, from, to, time, timeout, value;
  PLANB_RETURN_IF_ERROR(index_of(spec.key, "--key", &key));
  PLANB_RETURN_IF_ERROR(index_of(spec.from, "--from", &from));
  PLANB_RETURN_IF_ERROR(index_of(spec.to, "--to", &to));
  PLANB_RETURN_IF_ERROR(index_of(spec.time, "--time", &time));
  PLANB_RETURN_IF_ERROR(index_of(spec.timeout, "--timeout-column", &timeout));
  PLANB_RETURN_IF_ERROR(index_of(spec.value, "--value", &value));
  std::vector<size_t> json_columns;
  for (const std::string& column : spec.value_json) {
    json_columns.push_back(kAbsent);
    PLANB_RETURN_IF_ERROR(index_of(column, "--value-json", &json_columns.back()));
  }
  // The object's text before each value: `{"a":`, `,"b":`, built once.
  std::vector<std::string> json_heads;
  for (size_t i = 0; i < spec.value_json.size(); ++i) {
    std::string head = i == 0 ? "{" : ",";
    AppendJsonString(spec.value_json[i], &head);
    json_heads.push_back(head + ":");
  }
  std::string json;
  auto field = [&fields](size_t index) { return index == kAbsent ? std::string_view() : fields[index]; };
  while (true) {
    PLANB_RETURN_IF_ERROR(reader.Next(&fields, &got));
    if (!got) return Status::Ok();
    if (fields.size() != names.size()) {
      return rows->Fail(reader.line(),
                        std::to_string(fields.size()) + " columns, " + source + " " + std::to_string(names.size()));
    }
    RowTexts texts;
    texts.key = field(key);
    texts.from = field(from);
    texts.to = field(to);
    texts.time = field(time);
    texts.timeout = field(timeout);
    texts.value = field(value);
    if (!json_columns.empty()) {
      json.clear();
      for (size_t i = 0; i < json_columns.size(); ++i) {
        json += json_heads[i];
        AppendJsonString(fields[json_columns[i]], &json);
      }
      json += '}';
      texts.value = json;
      texts.value_is_json = true;
    }
    PLANB_RETURN_IF_ERROR(rows->Hand(reader.line(), texts));
  }
}

}  // namespace planb
