// mmdblookup's format (libmaxminddb's MMDB_dump_entry_data_list): a map as `{`, then per member `"key": ` and the
// value, then `}`; an array as `[` ... `]`; a scalar as `TEXT <type>`: strings in quotes unescaped, double and
// float with %f, uint128 as 0x and 32 hex digits, bytes as upper-case hex, booleans true/false.
#include "support/mmdb_fixture.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "support/test_env.h"

namespace planb::testing {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string Hex(const std::vector<uint8_t>& bytes) {
  std::string out;
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof buf, "%02X", b);
    out += buf;
  }
  return out;
}

bool FromBase64(const std::string& text, std::vector<uint8_t>* out) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.size() % 4 != 0) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const size_t v = kAlphabet.find(c);
    if (v == std::string::npos) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  return true;
}

class LinesSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit LinesSax(const nlohmann::json& types) : types_(types) {}
  std::vector<std::string> lines;

  bool null() override { return Fail(); }
  bool boolean(bool v) override { return Scalar(v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return Number(std::to_string(v), static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(std::to_string(v), static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t& text) override { return Number(text, v); }
  bool string(string_t& v) override {
    const std::string type = CurrentType();
    if (type == "bytes") {
      std::vector<uint8_t> bytes;
      if (!FromBase64(v, &bytes)) return Fail();
      return Scalar(Hex(bytes));
    }
    if (type != "utf8_string") return Fail();
    return Scalar("\"" + v + "\"");
  }
  bool binary(binary_t&) override { return Fail(); }
  bool start_object(std::size_t) override {
    if (!stack_.empty() && CurrentType() != "map") return Fail();
    lines.push_back("{");
    stack_.push_back("");
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    lines.push_back("\"" + k + "\":");
    return true;
  }
  bool end_object() override { return Close("}"); }
  bool start_array(std::size_t) override {
    const nlohmann::json spec = CurrentSpec();
    if (!spec.is_array() || spec.size() != 2) return Fail();
    lines.push_back("[");
    stack_.push_back(spec[1].get<std::string>());
    return true;
  }
  bool end_array() override { return Close("]"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return Fail(); }

 private:
  nlohmann::json CurrentSpec() const {
    if (stack_.empty()) return "map";
    if (!stack_.back().empty()) return stack_.back();  // inside an array: its element type
    return types_.contains(key_) ? types_[key_] : nlohmann::json("?");
  }
  std::string CurrentType() const {
    const nlohmann::json spec = CurrentSpec();
    return spec.is_string() ? spec.get<std::string>() : "array";
  }
  bool Close(const char* token) {
    lines.push_back(token);
    stack_.pop_back();
    return true;
  }
  // A string with line breaks spans lines in mmdblookup's output as well.
  bool Scalar(const std::string& text) {
    std::istringstream in(text + " <" + CurrentType() + ">");
    for (std::string line; std::getline(in, line);) {
      if (!Trim(line).empty()) lines.push_back(Trim(line));
    }
    return true;
  }
  bool Number(const std::string& text, double v) {
    const std::string type = CurrentType();
    char buf[512];
    if (type == "double") {
      std::snprintf(buf, sizeof buf, "%f", v);
      return Scalar(buf);
    }
    if (type == "float") {
      std::snprintf(buf, sizeof buf, "%f", static_cast<double>(static_cast<float>(v)));
      return Scalar(buf);
    }
    if (type == "uint128") {
      unsigned __int128 n = 0;
      for (char c : text) {
        if (c < '0' || c > '9') return Fail();
        n = n * 10 + static_cast<unsigned>(c - '0');
      }
      std::snprintf(buf, sizeof buf, "0x%016" PRIX64 "%016" PRIX64, static_cast<uint64_t>(n >> 64),
                    static_cast<uint64_t>(n));
      return Scalar(buf);
    }
    if (type != "uint16" && type != "uint32" && type != "uint64" && type != "int32") return Fail();
    return Scalar(text);
  }
  bool Fail() {
    lines = {"bad JSON"};
    return false;
  }

  const nlohmann::json& types_;
  std::vector<std::string> stack_;  // per open container: "" an object, else an array's element type
  std::string key_;
};

}  // namespace

std::string MakeMmdb(const std::string& path, const nlohmann::json& description) {
  ProcessSpec spec;
  spec.binary = "/usr/bin/perl";
  spec.args = {std::string(PLANB_SOURCE_DIR) + "/tests/support/make_mmdb.pl", path};
  spec.stdin_text = description.dump();
  const ProcessResult r = RunProcess(spec);
  return r.exit_code == 0 ? "" : "make_mmdb.pl exit " + std::to_string(r.exit_code) + ": " + r.err;
}

std::vector<std::string> MmdblookupLines(const std::string& file, const std::string& address) {
  ProcessSpec spec;
  spec.binary = "/usr/bin/mmdblookup";
  spec.args = {"--file", file, "--ip", address};
  const ProcessResult r = RunProcess(spec);
  if (r.exit_code != 0) return {"mmdblookup failed: " + r.out + r.err};
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> MmdblookupLinesFor(const std::string& record_json, const nlohmann::json& types) {
  LinesSax sax(types);
  if (!nlohmann::json::sax_parse(record_json, &sax)) return {"bad JSON"};
  return sax.lines;
}

}  // namespace planb::testing
