#include "host/commands/row_formats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "host/common/iso_time.h"
#include "planb/ip_address.h"

namespace planb {
namespace {

using Fields = std::vector<FieldSpec>;

class CsvWriter final : public RowWriter {
 public:
  CsvWriter(Fields fields, std::ostream& out) : fields_(std::move(fields)), out_(out) {
    for (size_t i = 0; i < fields_.size(); ++i) out_ << (i ? "," : "") << Quote(fields_[i].name);
    out_ << "\n";
  }
  void Write(const Row& row) override {
    for (size_t i = 0; i < fields_.size(); ++i) {
      out_ << (i ? "," : "") << Quote(FieldText(row, fields_[i], static_cast<uint32_t>(i)));
    }
    out_ << "\n";
  }
  void Finish() override { out_.flush(); }

 private:
  static std::string Quote(const std::string& text) { return CsvField(text); }
  const Fields fields_;
  std::ostream& out_;
};

class JsonWriter final : public RowWriter {
 public:
  JsonWriter(Fields fields, std::ostream& out) : fields_(std::move(fields)), out_(out) { out_ << "["; }
  // Written by hand rather than through nlohmann's dump, so that doubles print as FormatReal does in every format.
  void Write(const Row& row) override {
    std::string object = "{";
    for (size_t i = 0; i < fields_.size(); ++i) {
      object += (i ? "," : "") + JsonString(fields_[i].name) + ":" +
                FieldJson(row, fields_[i], static_cast<uint32_t>(i));
    }
    out_ << (rows_++ ? ",\n " : "\n ") << object << "}";
  }
  void Finish() override {
    out_ << (rows_ ? "\n]\n" : "]\n");
    out_.flush();
  }

 private:
  const Fields fields_;
  std::ostream& out_;
  uint64_t rows_ = 0;
};

// Sizes its columns on the first kBufferedRows rows, then streams the rest with those widths.
class TableWriter final : public RowWriter {
 public:
  TableWriter(Fields fields, std::ostream& out) : fields_(std::move(fields)), out_(out), widths_(fields_.size()) {
    for (size_t i = 0; i < fields_.size(); ++i) widths_[i] = std::string_view(fields_[i].name).size();
  }
  void Write(const Row& row) override {
    std::vector<std::string> cells;
    for (size_t i = 0; i < fields_.size(); ++i) {
      cells.push_back(Flatten(FieldText(row, fields_[i], static_cast<uint32_t>(i))));
    }
    ++rows_;
    if (header_printed_) return PrintLine(cells);
    for (size_t i = 0; i < cells.size(); ++i) widths_[i] = std::max(widths_[i], Width(cells[i]));
    buffered_.push_back(std::move(cells));
    if (buffered_.size() == kBufferedRows) Flush();
  }
  void Finish() override {
    Flush();
    out_ << "(" << rows_ << (rows_ == 1 ? " row)\n" : " rows)\n");
    out_.flush();
  }

 private:
  static constexpr size_t kBufferedRows = 1000;

  // Display width in characters (UTF-8 continuation bytes do not count).
  static size_t Width(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  }
  // One row per line: line breaks inside values are shown as spaces.
  static std::string Flatten(std::string s) {
    std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
    return s;
  }
  void Flush() {
    if (!header_printed_) {
      std::vector<std::string> names;
      for (const FieldSpec& f : fields_) names.push_back(f.name);
      PrintLine(names);
      for (size_t i = 0; i < widths_.size(); ++i) out_ << (i ? "-+-" : "") << std::string(widths_[i], '-');
      out_ << "\n";
      header_printed_ = true;
    }
    for (const auto& cells : buffered_) PrintLine(cells);
    buffered_.clear();
  }
  void PrintLine(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      out_ << (i ? " | " : "") << cells[i];
      if (i + 1 < cells.size()) out_ << std::string(widths_[i] - std::min(widths_[i], Width(cells[i])), ' ');
    }
    out_ << "\n";
  }

  const Fields fields_;
  std::ostream& out_;
  std::vector<size_t> widths_;
  std::vector<std::vector<std::string>> buffered_;
  bool header_printed_ = false;
  uint64_t rows_ = 0;
};

}  // namespace

bool ParseOutputFormat(std::string_view text, OutputFormat* format) {
  if (text == "table") *format = OutputFormat::kTable;
  else if (text == "csv") *format = OutputFormat::kCsv;
  else if (text == "json") *format = OutputFormat::kJson;
  else return false;
  return true;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

namespace {
std::string AddressText(const uint8_t* bytes) {
  ip::Address address;
  std::memcpy(address.bytes, bytes, sizeof(address.bytes));
  char text[ip::kMaxText];
  return std::string(text, ip::Format(address, text));
}

std::string TimeText(const FieldSpec& field, int64_t ms) {
  return field.kind == FieldKind::kNumber ? std::to_string(ms) : FormatIsoTime(ms);
}
}  // namespace

FieldValue OwnFieldOf(const Row& row, uint32_t index) {
  return row.own_fields != nullptr && index < row.own_field_count ? row.own_fields[index] : FieldValue();
}

FieldValue FieldValueOf(const Row& row, const FieldSpec& field, uint32_t index) {
  FieldValue v;
  switch (field.field) {
    case RowField::kOwn: return OwnFieldOf(row, index);
    case RowField::kKey: v.text = row.key; break;
    case RowField::kValue: v.text = row.value; break;
    case RowField::kValueType: v.text = Bytes(std::string_view(ValueTypeName(row.value_type))); break;
    case RowField::kKeyStart: v.number = row.range_from; break;
    case RowField::kKeyEnd: v.number = row.range_to; break;
    case RowField::kEffectiveTime: v.number = row.effective_time_ms; break;
    case RowField::kStart: v.number = row.session_start_ms; break;
    case RowField::kEnd: v.number = row.session_end_ms; break;
  }
  return v;
}

std::string FormatReal(double value) {
  char buffer[64];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, r.ptr);
}

std::string JsonString(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string FieldJson(const Row& row, const FieldSpec& field, uint32_t index) {
  // A JSON value goes in as the JSON it is (checked at load, and in the verifier for uploads).
  if (field.field == RowField::kValue && row.value_type == ValueType::kJson) return std::string(row.value.view());
  switch (field.kind) {
    case FieldKind::kNumber:
      return FieldText(row, field, index);
    case FieldKind::kDouble: {
      const double v = OwnFieldOf(row, index).real;
      return std::isfinite(v) ? FormatReal(v) : "null";
    }
    case FieldKind::kBool:
      return FieldText(row, field, index);
    default:
      return JsonString(FieldText(row, field, index));
  }
}

std::string FieldText(const Row& row, const FieldSpec& field, uint32_t index) {
  switch (field.field) {
    case RowField::kKey: return std::string(row.key.view());
    case RowField::kKeyStart:
      return field.kind == FieldKind::kAddress ? AddressText(row.address_from) : std::to_string(row.range_from);
    case RowField::kKeyEnd:
      return field.kind == FieldKind::kAddress ? AddressText(row.address_to) : std::to_string(row.range_to);
    // A time member declared as a number (descriptor_copy.cc allows it) prints as one.
    case RowField::kEffectiveTime: return TimeText(field, row.effective_time_ms);
    case RowField::kStart: return TimeText(field, row.session_start_ms);
    case RowField::kEnd: return TimeText(field, row.session_end_ms);
    case RowField::kValueType: return ValueTypeName(row.value_type);
    case RowField::kValue: return std::string(row.value.view());
    case RowField::kOwn: {
      const FieldValue v = OwnFieldOf(row, index);
      switch (field.kind) {
        case FieldKind::kText: return std::string(v.text.view());
        case FieldKind::kNumber: return std::to_string(v.number);
        case FieldKind::kDate: return FormatIsoTime(v.number);
        case FieldKind::kDouble: return FormatReal(v.real);
        case FieldKind::kBool: return v.flag ? "true" : "false";
        case FieldKind::kAddress: return "";  // the host's kind, for KeyStart / KeyEnd only
      }
      return "";
    }
  }
  return "";
}

std::unique_ptr<RowWriter> RowWriter::Create(OutputFormat format, const FieldSpec* fields, uint32_t field_count,
                                             std::ostream& out) {
  Fields list(fields, fields + field_count);
  switch (format) {
    case OutputFormat::kCsv: return std::make_unique<CsvWriter>(std::move(list), out);
    case OutputFormat::kJson: return std::make_unique<JsonWriter>(std::move(list), out);
    case OutputFormat::kTable: break;
  }
  return std::make_unique<TableWriter>(std::move(list), out);
}

}  // namespace planb
