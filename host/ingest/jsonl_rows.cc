// JSON lines for tabular_reader. Each line is parsed twice by simdjson: the DOM parser validates all of it (RFC
// 8259 and UTF-8, also in fields no column names) and says why it is not an object; the On-Demand parser then
// finds the named fields and gives numbers, objects and arrays as written (the DOM keeps only their values).
// Lines sit in one buffer with simdjson's padding after it, so neither parser copies them.
#include <simdjson.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/tabular_rows.h"

namespace planb {
namespace {

namespace od = simdjson::ondemand;

constexpr size_t kBlockSize = 64 * 1024;

// Lines of a stream, LF or CRLF ended, each followed in memory by SIMDJSON_PADDING readable bytes.
class PaddedLines {
 public:
  PaddedLines(std::istream& in, const std::string& name, size_t max_line_bytes)
      : in_(in), name_(name), max_(max_line_bytes) {
    Grow(kBlockSize);
  }

  // The next line (without its line end) and its 1-based number; *got = false at the end.
  Status Next(std::string_view* line, uint64_t* number, bool* got) {
    *got = false;
    while (true) {
      const char* nl = static_cast<const char*>(std::memchr(buffer_.get() + scan_, '\n', end_ - scan_));
      if (nl != nullptr || (eof_ && start_ < end_)) {
        const size_t stop = nl != nullptr ? nl - buffer_.get() : end_;
        if (stop - start_ > max_) return TooLong();
        size_t size = stop - start_;
        if (size > 0 && buffer_[start_ + size - 1] == '\r') --size;
        *line = std::string_view(buffer_.get() + start_, size);
        *number = ++line_;
        if (*number == 1 && line->substr(0, 3) == "\xEF\xBB\xBF") line->remove_prefix(3);  // a BOM, as CSV's
        start_ = scan_ = nl != nullptr ? stop + 1 : end_;
        *got = true;
        return Status::Ok();
      }
      if (eof_) return Status::Ok();
      scan_ = end_;
      if (scan_ - start_ > max_) return TooLong();
      // Room for a block after what is kept: move the unfinished line to the front, or grow.
      if (start_ > 0) {
        std::memmove(buffer_.get(), buffer_.get() + start_, end_ - start_);
        end_ -= start_;
        scan_ -= start_;
        start_ = 0;
      }
      if (capacity_ - end_ < kBlockSize) Grow(capacity_ * 2);
      in_.read(buffer_.get() + end_, static_cast<std::streamsize>(kBlockSize));
      const size_t n = static_cast<size_t>(in_.gcount());
      if (n == 0) {
        if (in_.bad()) return Status::IOError(name_ + ": read failed");
        eof_ = true;
      }
      end_ += n;
    }
  }

 private:
  Status TooLong() const {
    return Status::Invalid(name_ + ":" + std::to_string(line_ + 1) + ": line longer than " + std::to_string(max_) +
                           " bytes");
  }

  void Grow(size_t capacity) {
    std::unique_ptr<char[]> bigger(new char[capacity + simdjson::SIMDJSON_PADDING]);
    if (buffer_) std::memcpy(bigger.get(), buffer_.get(), end_);
    buffer_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::istream& in_;
  const std::string& name_;
  const size_t max_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  size_t start_ = 0;  // the unread lines begin here
  size_t scan_ = 0;   // no '\n' in [start_, scan_)
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t line_ = 0;
};

std::string_view TrimJsonSpace(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

const char* TypeName(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::STRING:
      return "a string";
    case simdjson::dom::element_type::BOOL:
      return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "a number";
  }
}

enum class Use { kText, kValue, kJson };  // a key/range/time text, a --value, a --value-json member

// Finds `column` (dotted: nested objects) in `doc` and puts its text for `use` into *out; "" when all is well,
// else why not.
std::string Extract(od::document& doc, const std::string& column, Use use, std::string* out) {
  doc.rewind();
  od::value v;
  size_t start = 0;
  while (true) {
    const size_t dot = column.find('.', start);
    const std::string_view segment(column.data() + start, (dot == std::string::npos ? column.size() : dot) - start);
    od::value next;
    const simdjson::error_code e =
        start == 0 ? doc.find_field_unordered(segment).get(next) : v.find_field_unordered(segment).get(next);
    if (e == simdjson::NO_SUCH_FIELD) return "no field '" + column + "'";
    if (e == simdjson::INCORRECT_TYPE)
      return "no field '" + column + "' ('" + column.substr(0, start - 1) + "' is not an object)";
    if (e != simdjson::SUCCESS) return std::string("field '") + column + "': " + simdjson::error_message(e);
    v = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return "field '" + column + "': unreadable";
  std::string_view text;
  simdjson::error_code e = simdjson::SUCCESS;
  switch (type) {
    case od::json_type::string:
      if (use == Use::kJson) {
        text = v.raw_json_token();
      } else {
        e = v.get_string().get(text);
      }
      break;
    case od::json_type::number:
      text = v.raw_json_token();
      break;
    case od::json_type::boolean:
    case od::json_type::null:
      if (use == Use::kText) {
        return "field '" + column + "' is " + std::string(TrimJsonSpace(v.raw_json_token())) +
               ": expected a string or a number";
      }
      text = v.raw_json_token();
      break;
    case od::json_type::object:
    case od::json_type::array: {
      if (use == Use::kText) {
        return "field '" + column + "' is " + (type == od::json_type::object ? "an object" : "an array") +
               ": expected a string or a number";
      }
      if (type == od::json_type::object) {
        od::object object;
        e = v.get_object().get(object);
        if (e == simdjson::SUCCESS) e = object.raw_json().get(text);
      } else {
        od::array array;
        e = v.get_array().get(array);
        if (e == simdjson::SUCCESS) e = array.raw_json().get(text);
      }
      break;
    }
  }
  if (e != simdjson::SUCCESS) return std::string("field '") + column + "': " + simdjson::error_message(e);
  out->assign(type == od::json_type::string && use != Use::kJson ? text : TrimJsonSpace(text));
  return "";
}

}  // namespace

Status ReadJsonLines(std::istream& in, TabularRows* rows) {
  const TabularSpec& spec = rows->spec();
  PaddedLines lines(in, rows->name(), spec.max_record_bytes);
  simdjson::dom::parser dom;
  od::parser on_demand;
  // One reused text per role, in RowTexts order, and the --value-json members.
  struct Role {
    const std::optional<std::string>* column;
    Use use;
    std::string text;
  };
  Role roles[] = {{&spec.key, Use::kText, {}},  {&spec.from, Use::kText, {}},    {&spec.to, Use::kText, {}},
                  {&spec.time, Use::kText, {}}, {&spec.timeout, Use::kText, {}}, {&spec.value, Use::kValue, {}}};
  std::vector<std::string> heads;  // `{"a":`, `,"b":`
  for (size_t i = 0; i < spec.value_json.size(); ++i) {
    std::string head = i == 0 ? "{" : ",";
    AppendJsonString(spec.value_json[i], &head);
    heads.push_back(head + ":");
  }
  std::string member;
  std::string json;
  std::string_view line;
  uint64_t number = 0;
  bool got = false;
  while (true) {
    PLANB_RETURN_IF_ERROR(lines.Next(&line, &number, &got));
    if (!got) return Status::Ok();
    if (line.empty()) continue;  // a wholly empty line, as in CSV
    simdjson::dom::element element;
    const simdjson::error_code parsed = dom.parse(line.data(), line.size(), false).get(element);
    if (parsed != simdjson::SUCCESS) {
      return rows->Fail(number, std::string("not a JSON object: ") + simdjson::error_message(parsed));
    }
    if (!element.is_object()) return rows->Fail(number, std::string("not a JSON object: ") + TypeName(element.type()));
    od::document doc;
    const simdjson::error_code iterated =
        on_demand.iterate(line.data(), line.size(), line.size() + simdjson::SIMDJSON_PADDING).get(doc);
    if (iterated != simdjson::SUCCESS) {
      return rows->Fail(number, std::string("not a JSON object: ") + simdjson::error_message(iterated));
    }
    for (Role& role : roles) {
      if (!*role.column) continue;
      const std::string why = Extract(doc, **role.column, role.use, &role.text);
      if (!why.empty()) return rows->Fail(number, why);
    }
    RowTexts texts;
    texts.key = roles[0].text;
    texts.from = roles[1].text;
    texts.to = roles[2].text;
    texts.time = roles[3].text;
    texts.timeout = roles[4].text;
    texts.value = roles[5].text;
    if (!spec.value_json.empty()) {
      json.clear();
      for (size_t i = 0; i < spec.value_json.size(); ++i) {
        const std::string why = Extract(doc, spec.value_json[i], Use::kJson, &member);
        if (!why.empty()) return rows->Fail(number, why);
        json += heads[i];
        json += member;
      }
      json += '}';
      texts.value = json;
    }
    PLANB_RETURN_IF_ERROR(rows->Hand(number, texts));
  }
}

}  // namespace planb
