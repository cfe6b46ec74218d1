#include "host/config/ini_reader.h"

#include <cstdio>

#include "host/common/text_lines.h"

namespace planb {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Where a lone '#' starts an inline comment, or npos. A '#' touching other text is text: Z85 keys hold '#'.
size_t InlineComment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '#') continue;
    const bool starts_word = i == 0 || IsBlank(line[i - 1]);
    const bool ends_word = i + 1 == line.size() || IsBlank(line[i + 1]);
    if (starts_word && ends_word) return i;
  }
  return std::string_view::npos;
}

// Index of the first control character other than tab, or npos. DEL counts: nothing in a config needs it.
size_t FindControl(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
  }
  return std::string_view::npos;
}

}  // namespace

// Boost.Program_options (which this replaces) cut every line at its first '#', so a Z85 key holding '#' lost
// its tail without a word; its line handling could not be told otherwise, hence this reader.
Status ReadIni(std::string_view name, std::string_view text, std::vector<IniSection>* sections) {
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  std::vector<IniSection> result(1);
  PLANB_RETURN_IF_ERROR(ForEachLine(text, [&](std::string_view line, size_t line_number) {
    const std::string where = std::string(name) + ": line " + std::to_string(line_number) + ": ";
    if (const size_t at = FindControl(line); at != std::string_view::npos) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned char>(line[at]));
      return Status::Invalid(where + "control character " + code + " at column " + std::to_string(at + 1));
    }
    line = TrimBlanks(line);
    if (line.empty() || line.front() == '#' || line.front() == ';') return Status::Ok();
    line = TrimBlanks(line.substr(0, InlineComment(line)));
    if (line.front() == '[') {
      if (line.back() != ']') return Status::Invalid(where + "'" + std::string(line) + "' has no closing ']'");
      const std::string_view header = TrimBlanks(line.substr(1, line.size() - 2));
      if (header.empty()) return Status::Invalid(where + "'" + std::string(line) + "' is a section with no name");
      result.push_back(IniSection{std::string(header), {}});
      return Status::Ok();
    }
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      return Status::Invalid(where + "'" + std::string(line) + "' is neither [section] nor key = value");
    }
    const std::string_view key = TrimBlanks(line.substr(0, equals));
    if (key.empty()) return Status::Invalid(where + "'" + std::string(line) + "' has no key before the '='");
    result.back().entries.emplace_back(std::string(key), std::string(TrimBlanks(line.substr(equals + 1))));
    return Status::Ok();
  }));
  *sections = std::move(result);
  return Status::Ok();
}

}  // namespace planb
