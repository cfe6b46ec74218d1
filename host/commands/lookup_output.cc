#include "host/commands/lookup_output.h"

#include <nlohmann/json.hpp>

#include "host/commands/lookup_answers.h"
#include "host/commands/lookup_wire.h"
#include "host/commands/row_formats.h"
#include "host/common/iso_time.h"

namespace planb {
namespace {

// "3" for one field; "count=3 ratio=0.25" for several. `row` null: a miss (every field its kind's zero).
std::string ShownText(const std::vector<ShownField>& shown, const Row* row) {
  const Row none;
  std::string text;
  for (const ShownField& f : shown) {
    if (!text.empty()) text += " ";
    if (shown.size() > 1) text += f.name + "=";
    text += FieldText(row != nullptr ? *row : none, f.spec, f.index);
  }
  return text;
}

class TextWriter final : public LookupWriter {
 public:
  TextWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) {}
  void Found(const std::string& key, int64_t, const Row& row) override {
    if (!shape_.single) out_ << key << "\t";
    if (!shape_.shown.empty()) {
      out_ << ShownText(shape_.shown, &row) << "\n";
      return;
    }
    if (shape_.session) {
      out_ << FormatIsoTime(row.session_start_ms) << " " << FormatIsoTime(row.session_end_ms);
    } else {
      out_.write(reinterpret_cast<const char*>(row.value.data), static_cast<std::streamsize>(row.value.size));
    }
    out_ << "\n";
  }
  // A miss of a count prints 0, when every shown field is one.
  void Missing(const std::string& key, int64_t) override {
    if (shape_.shown.empty()) return;
    for (const ShownField& f : shape_.shown) {
      if (!f.zero_when_absent) return;
    }
    if (!shape_.single) out_ << key << "\t";
    out_ << ShownText(shape_.shown, nullptr) << "\n";
  }
  void Finish() override { out_.flush(); }

 private:
  const LookupShape shape_;
  std::ostream& out_;
};

class JsonWriter final : public LookupWriter {
 public:
  JsonWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) { out_ << "["; }
  void Found(const std::string& key, int64_t number, const Row& row) override {
    if (!shape_.shown.empty()) return PrintShown(key, number, &row);
    nlohmann::ordered_json object = Key(key, number);
    if (!shape_.session && row.value_type == ValueType::kJson) {
      // The value as the JSON it is (checked at load and in the verifier); parsed again it would lose its
      // numbers' text (1.50, integers past 2^64).
      std::string text = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      text.pop_back();  // the object's '}'
      return Print(text + ",\"value\":" + std::string(row.value.view()) + ",\"found\":true}");
    }
    if (shape_.session) {
      object["start"] = FormatIsoTime(row.session_start_ms);
      object["end"] = FormatIsoTime(row.session_end_ms);
    } else {
      object["value"] = std::string(row.value.view());
    }
    object["found"] = true;
    Print(object);
  }
  void Missing(const std::string& key, int64_t number) override {
    if (!shape_.shown.empty()) return PrintShown(key, number, nullptr);
    nlohmann::ordered_json object = Key(key, number);
    if (shape_.session) {
      object["start"] = nullptr;
      object["end"] = nullptr;
    } else {
      object["value"] = nullptr;
    }
    object["found"] = false;
    Print(object);
  }
  void Finish() override {
    out_ << (objects_ ? "\n]\n" : "]\n");
    out_.flush();
  }

 private:
  nlohmann::ordered_json Key(const std::string& key, int64_t number) const {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    if (shape_.number_keys) {
      object["key"] = number;
    } else {
      object["key"] = key;
    }
    return object;
  }
  void Print(const nlohmann::ordered_json& object) {
    // Invalid UTF-8 in keys or stored bytes is replaced (U+FFFD), as query's json does.
    Print(object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  void Print(const std::string& object) { out_ << (objects_++ ? ",\n " : "\n ") << object; }
  // By hand, so that doubles print as FormatReal does in every format (row_formats.h). `row` null: a miss.
  void PrintShown(const std::string& key, int64_t number, const Row* row) {
    std::string object = "{\"key\":" + (shape_.number_keys ? std::to_string(number) : JsonString(key));
    for (const ShownField& f : shape_.shown) {
      object += "," + JsonString(f.name) + ":";
      if (row != nullptr) {
        object += FieldJson(*row, f.spec, f.index);
      } else {
        object += f.zero_when_absent ? FieldJson(Row(), f.spec, f.index) : "null";
      }
    }
    Print(object + ",\"found\":" + (row != nullptr ? "true}" : "false}"));
  }
  const LookupShape shape_;
  std::ostream& out_;
  uint64_t objects_ = 0;
};

class CsvWriter final : public LookupWriter {
 public:
  CsvWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) {
    if (!shape_.shown.empty()) {
      out_ << "key";
      for (const ShownField& f : shape_.shown) out_ << "," << CsvField(f.name);
      out_ << ",found\n";
      return;
    }
    out_ << (shape_.session ? "key,start,end,found\n" : "key,value,found\n");
  }
  void Found(const std::string& key, int64_t, const Row& row) override {
    out_ << CsvField(key) << ",";
    if (!shape_.shown.empty()) {
      for (const ShownField& f : shape_.shown) out_ << CsvField(FieldText(row, f.spec, f.index)) << ",";
      out_ << "true\n";
      return;
    }
    if (shape_.session) {
      out_ << FormatIsoTime(row.session_start_ms) << "," << FormatIsoTime(row.session_end_ms);
    } else {
      out_ << CsvField(row.value.view());
    }
    out_ << ",true\n";
  }
  void Missing(const std::string& key, int64_t) override {
    if (!shape_.shown.empty()) {
      out_ << CsvField(key) << ",";
      for (const ShownField& f : shape_.shown) {
        if (f.zero_when_absent) out_ << CsvField(FieldText(Row(), f.spec, f.index));
        out_ << ",";
      }
      out_ << "false\n";
      return;
    }
    out_ << CsvField(key) << (shape_.session ? ",,,false\n" : ",,false\n");
  }
  void Finish() override { out_.flush(); }

 private:
  const LookupShape shape_;
  std::ostream& out_;
};

}  // namespace

std::vector<ShownField> ShownFields(const PluginDescriptor& type) {
  std::vector<ShownField> shown;
  for (uint32_t i = 0; i < type.field_count; ++i) {
    const FieldSpec& spec = type.fields[i];
    if ((spec.flags & kFieldShownByLookup) == 0) continue;
    ShownField f;
    for (const char* c = spec.name; *c != '\0'; ++c) {
      f.name += static_cast<char>(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    }
    f.spec = spec;
    f.spec.name = "";
    f.index = i;
    f.zero_when_absent = (spec.flags & kFieldZeroWhenAbsent) != 0;
    shown.push_back(std::move(f));
  }
  return shown;
}

bool ParseLookupFormat(std::string_view text, LookupFormat* format) {
  if (text == "text") *format = LookupFormat::kText;
  else if (text == "json") *format = LookupFormat::kJson;
  else if (text == "csv") *format = LookupFormat::kCsv;
  else if (text == "wire") *format = LookupFormat::kWire;
  else return false;
  return true;
}

std::unique_ptr<LookupWriter> LookupWriter::Create(LookupFormat format, LookupShape shape, std::ostream& out) {
  switch (format) {
    case LookupFormat::kJson: return std::make_unique<JsonWriter>(shape, out);
    case LookupFormat::kCsv: return std::make_unique<CsvWriter>(shape, out);
    case LookupFormat::kWire: return CreateWireWriter(shape, out);
    case LookupFormat::kAnswers: return CreateAnswersWriter(shape, out);
    case LookupFormat::kText: break;
  }
  return std::make_unique<TextWriter>(shape, out);
}

}  // namespace planb
