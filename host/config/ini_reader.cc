#include "host/config/ini_reader.h"

#include <exception>
#include <sstream>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>

#include "host/common/option_error.h"

namespace planb {
namespace {

constexpr std::string_view kBlank = " \t\r\n";

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(kBlank);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kBlank) - begin + 1);
}

// Boost's own line handling (common_config_file_iterator::get, Boost 1.74): '#' starts a comment, the
// rest is trimmed of " \t\r\n", and "[...]" is a header whatever it holds.
std::string_view CleanLine(std::string_view line) { return Trim(line.substr(0, line.find('#'))); }

bool IsHeader(std::string_view s) { return s.size() >= 2 && s.front() == '[' && s.back() == ']'; }

// The prefix Boost puts before the keys under `raw_header` (the untrimmed text between the brackets).
std::string BoostPrefix(std::string_view raw_header) {
  std::string prefix(raw_header);
  if (!prefix.empty() && prefix.back() != '.') prefix += '.';
  return prefix;
}

}  // namespace

// Boost flattens "[s] k = v" into the key "s.k", which loses where a section ends: [map.a.b] and
// [map.a] with key "b.type" look the same, [map] and [map.] too, and a header with no keys vanishes.
// So a first pass finds the headers and counts the key lines under each, and Boost's options (in file
// order) are dealt out by those counts. The first pass also refuses "[]" before Boost sees it: Boost
// reads the last character of the empty section name.
Status ReadIni(std::string_view name, std::string_view text, std::vector<IniSection>* sections) {
  std::vector<IniSection> result(1);
  std::vector<std::string> prefixes(1);
  std::vector<size_t> key_lines(1, 0);
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = CleanLine(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    if (!IsHeader(line)) {
      ++key_lines.back();
      continue;
    }
    const std::string_view raw_header = line.substr(1, line.size() - 2);
    if (Trim(raw_header).empty()) {
      return Status::Invalid(std::string(name) + ": '" + std::string(line) + "' is a section with no name");
    }
    result.push_back(IniSection{std::string(Trim(raw_header)), {}});
    prefixes.push_back(BoostPrefix(raw_header));
    key_lines.push_back(0);
  }

  std::vector<boost::program_options::option> options;
  try {
    std::istringstream in{std::string(text)};
    options = boost::program_options::parse_config_file(
                  in, boost::program_options::options_description(), /*allow_unregistered=*/true)
                  .options;
  } catch (const boost::program_options::error& e) {
    return Status::Invalid(std::string(name) + ": " + OptionErrorText(e));
  } catch (const std::exception& e) {
    return Status::Invalid(std::string(name) + ": " + e.what());
  }

  size_t next = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    const std::string where = std::string(name) + (i == 0 ? "" : ": [" + result[i].header + "]");
    for (size_t n = 0; n < key_lines[i]; ++n, ++next) {
      // Only a Boost whose line rules differ from CleanLine's could get here.
      if (next >= options.size() || options[next].string_key.compare(0, prefixes[i].size(), prefixes[i]) != 0) {
        return Status::Internal(where + ": the INI reader lost track of the sections");
      }
      const boost::program_options::option& option = options[next];
      std::string key = option.string_key.substr(prefixes[i].size());
      std::string value = option.value.empty() ? std::string() : option.value.front();
      if (key.empty()) return Status::Invalid(where + ": '= " + value + "' has no key before the '='");
      result[i].entries.emplace_back(std::move(key), std::move(value));
    }
  }
  if (next != options.size()) {
    return Status::Internal(std::string(name) + ": the INI reader lost track of the sections");
  }
  *sections = std::move(result);
  return Status::Ok();
}

}  // namespace planb
