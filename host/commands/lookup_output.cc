#include "host/commands/lookup_output.h"

#include <nlohmann/json.hpp>

#include "host/commands/lookup_wire.h"
#include "host/commands/row_formats.h"
#include "host/common/iso_time.h"

namespace planb {
namespace {

class TextWriter final : public LookupWriter {
 public:
  TextWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) {}
  void Found(const std::string& key, int64_t, const Row& row) override {
    if (!shape_.single) out_ << key << "\t";
    if (shape_.session) {
      out_ << FormatIsoTime(row.session_start_ms) << " " << FormatIsoTime(row.session_end_ms);
    } else {
      out_.write(reinterpret_cast<const char*>(row.value.data), static_cast<std::streamsize>(row.value.size));
    }
    out_ << "\n";
  }
  void Missing(const std::string&, int64_t) override {}
  void Finish() override { out_.flush(); }

 private:
  const LookupShape shape_;
  std::ostream& out_;
};

class JsonWriter final : public LookupWriter {
 public:
  JsonWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) { out_ << "["; }
  void Found(const std::string& key, int64_t number, const Row& row) override {
    nlohmann::ordered_json object = Key(key, number);
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
    out_ << (objects_++ ? ",\n " : "\n ") << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const LookupShape shape_;
  std::ostream& out_;
  uint64_t objects_ = 0;
};

class CsvWriter final : public LookupWriter {
 public:
  CsvWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) {
    out_ << (shape_.session ? "key,start,end,found\n" : "key,value,found\n");
  }
  void Found(const std::string& key, int64_t, const Row& row) override {
    out_ << CsvField(key) << ",";
    if (shape_.session) {
      out_ << FormatIsoTime(row.session_start_ms) << "," << FormatIsoTime(row.session_end_ms);
    } else {
      out_ << CsvField(row.value.view());
    }
    out_ << ",true\n";
  }
  void Missing(const std::string& key, int64_t) override {
    out_ << CsvField(key) << (shape_.session ? ",,,false\n" : ",,false\n");
  }
  void Finish() override { out_.flush(); }

 private:
  const LookupShape shape_;
  std::ostream& out_;
};

}  // namespace

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
    case LookupFormat::kText: break;
  }
  return std::make_unique<TextWriter>(shape, out);
}

}  // namespace planb
