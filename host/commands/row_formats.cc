#include "host/commands/row_formats.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "host/common/iso_time.h"

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
    for (size_t i = 0; i < fields_.size(); ++i) out_ << (i ? "," : "") << Quote(FieldText(row, fields_[i]));
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
  void Write(const Row& row) override {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const FieldSpec& f : fields_) {
      if (f.kind == FieldKind::kNumber) {
        object[f.name] = f.field == RowField::kKeyStart ? row.range_from : row.range_to;
      } else {
        object[f.name] = FieldText(row, f);
      }
    }
    // Invalid UTF-8 in stored bytes is replaced rather than failing the whole query.
    out_ << (rows_++ ? ",\n " : "\n ") << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
    for (const FieldSpec& f : fields_) cells.push_back(Flatten(FieldText(row, f)));
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

std::string FieldText(const Row& row, const FieldSpec& field) {
  switch (field.field) {
    case RowField::kKey: return std::string(row.key.view());
    case RowField::kKeyStart: return std::to_string(row.range_from);
    case RowField::kKeyEnd: return std::to_string(row.range_to);
    case RowField::kEffectiveTime: return FormatIsoTime(row.effective_time_ms);
    case RowField::kStart: return FormatIsoTime(row.session_start_ms);
    case RowField::kEnd: return FormatIsoTime(row.session_end_ms);
    case RowField::kValueType: return ValueTypeName(row.value_type);
    case RowField::kValue: return std::string(row.value.view());
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
