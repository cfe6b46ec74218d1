// JSON lines for tabular_reader, read as planb enrich reads events: each line checked whole (json_line_checker.h:
// RFC 8259 and UTF-8, also in fields no column names; numbers past simdjson's range accepted as RFC 8259 allows),
// then the named fields read from the line's text (json_text.h), so numbers, objects and arrays keep the text
// they were written with, and a name with escapes matches.
#include <map>
#include <string>
#include <vector>

#include "host/common/byte_source.h"
#include "host/common/json_line_checker.h"
#include "host/common/json_text.h"
#include "host/common/line_source.h"
#include "host/common/log_text.h"
#include "host/ingest/tabular_rows.h"

namespace planb {
namespace {

std::string_view TrimJsonSpace(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

enum class Use { kText, kValue, kJson };  // a key/range/time text, a --value, a --value-json member

// A column: its path, and the path of each of its parents (to say which one is not an object).
struct Column {
  std::string name;
  JsonPath path;
  std::vector<JsonPath> parents;  // "a", "a.b" for "a.b.c"
};

// The column `name` names (a field path: ParseJsonPath), or why it names none, with `flag` (e.g. "--key").
Status MakeColumn(const std::string& name, const char* flag, Column* out) {
  Column column;
  column.name = name;
  PLANB_RETURN_IF_ERROR(ParseJsonPath(name, &column.path).WithContext(flag));
  for (size_t n = 1; n < column.path.parts.size(); ++n) {
    JsonPath parent;
    parent.parts.assign(column.path.parts.begin(), column.path.parts.begin() + static_cast<std::ptrdiff_t>(n));
    parent.text = JsonPathText(parent.parts);
    column.parents.push_back(std::move(parent));
  }
  *out = std::move(column);
  return Status::Ok();
}

// Puts the text of `column` in `line` for `use` into *out; "" when all is well, else why not. `*is_json` (when
// given): whether *out is JSON text (anything but a string, whose unescaped text *out then holds).
std::string Extract(std::string_view line, const Column& column, Use use, std::string* scratch, std::string* out,
                    bool* is_json = nullptr) {
  std::string_view raw;
  if (!FindJsonValue(line, column.path, &raw)) {
    for (const JsonPath& parent : column.parents) {
      std::string_view parent_raw;
      if (FindJsonValue(line, parent, &parent_raw) && parent_raw[0] != '{') {
        return "no field '" + column.name + "' ('" + parent.text + "' is not an object)";
      }
    }
    return "no field '" + column.name + "'";
  }
  raw = TrimJsonSpace(raw);
  const char first = raw[0];
  if (use == Use::kText && (first == '{' || first == '[' || first == 't' || first == 'f' || first == 'n')) {
    const std::string what = first == '{' ? "an object" : first == '[' ? "an array" : std::string(raw);
    return "field '" + column.name + "' is " + what + ": expected a string or a number";
  }
  if (first == '"' && use != Use::kJson) {
    out->assign(JsonStringText(raw, scratch));
  } else {
    out->assign(raw);
  }
  if (is_json != nullptr) *is_json = use == Use::kJson || first != '"';
  return "";
}

}  // namespace

Status ReadJsonLines(std::istream& in, TabularRows* rows) {
  const TabularSpec& spec = rows->spec();
  StreamByteSource bytes(in);
  LineSource lines(bytes, rows->name(), JsonLineChecker::Padding(), spec.max_record_bytes);
  JsonLineChecker checker;
  // One reused text per role, in RowTexts order, and the --value-json members.
  struct Role {
    const std::optional<std::string>* column;
    const char* flag;
    Use use;
    Column parsed;
    std::string text;
  };
  Role roles[] = {{&spec.key, "--key", Use::kText, {}, {}},         {&spec.from, "--from", Use::kText, {}, {}},
                  {&spec.to, "--to", Use::kText, {}, {}},           {&spec.time, "--time", Use::kText, {}, {}},
                  {&spec.timeout, "--timeout-column", Use::kText, {}, {}}, {&spec.value, "--value", Use::kValue, {}, {}}};
  for (Role& role : roles) {
    if (*role.column) PLANB_RETURN_IF_ERROR(MakeColumn(**role.column, role.flag, &role.parsed));
  }
  std::vector<std::string> heads;  // `{"a":`, `,"b":`
  std::vector<Column> members;
  std::map<std::string, std::string> named;  // member name -> the column that has it
  for (size_t i = 0; i < spec.value_json.size(); ++i) {
    members.emplace_back();
    PLANB_RETURN_IF_ERROR(MakeColumn(spec.value_json[i], "--value-json", &members.back()));
    // Named by its member names joined with dots, unescaped: "client.ip", and "a.b" for the member a\.b.
    std::string name;
    for (const std::string& part : members.back().path.parts) name += (name.empty() ? "" : ".") + part;
    const auto [taken, fresh] = named.emplace(name, spec.value_json[i]);
    if (!fresh) {
      return Status::Invalid("--value-json: columns '" + LogValue(taken->second) + "' and '" +
                             LogValue(spec.value_json[i]) + "' would both be the member " + LogValue(name));
    }
    std::string head = i == 0 ? "{" : ",";
    AppendJsonString(name, &head);
    heads.push_back(head + ":");
  }
  std::string member;
  std::string json;
  std::string scratch;
  std::string why;
  std::vector<std::string_view> batch;
  for (;;) {
    PLANB_RETURN_IF_ERROR(lines.Next(256, &batch));
    if (batch.empty()) return Status::Ok();
    for (size_t i = 0; i < batch.size(); ++i) {
      const uint64_t number = lines.first_line() + i;
      std::string_view line = batch[i];
      if (number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // a BOM, as CSV's
      if (line.empty() || line == "\r") continue;  // a wholly empty line, as in CSV
      if (!checker.Check(line, true, &why)) return rows->Fail(number, "not a JSON object: " + why);
      bool value_is_json = false;
      for (Role& role : roles) {
        if (!*role.column) continue;
        const std::string problem = Extract(line, role.parsed, role.use, &scratch, &role.text,
                                            role.use == Use::kValue ? &value_is_json : nullptr);
        if (!problem.empty()) return rows->Fail(number, problem);
      }
      RowTexts texts;
      texts.value_is_json = value_is_json;
      texts.key = roles[0].text;
      texts.from = roles[1].text;
      texts.to = roles[2].text;
      texts.time = roles[3].text;
      texts.timeout = roles[4].text;
      texts.value = roles[5].text;
      if (!spec.value_json.empty()) {
        json.clear();
        for (size_t m = 0; m < members.size(); ++m) {
          const std::string problem = Extract(line, members[m], Use::kJson, &scratch, &member);
          if (!problem.empty()) return rows->Fail(number, problem);
          json += heads[m];
          json += member;
        }
        json += '}';
        texts.value = json;
        texts.value_is_json = true;
      }
      PLANB_RETURN_IF_ERROR(rows->Hand(number, texts));
    }
  }
}

}  // namespace planb
