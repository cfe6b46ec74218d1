// Small text files read line by line, as the config (ini_reader) and CURVE key files (key_file) are: lines end
// with LF or CRLF (the CR is dropped) and are numbered from 1; blanks are spaces and tabs.
#pragma once

#include <cstddef>
#include <string_view>

#include "planb/status.h"

namespace planb {

// `s` without the blanks (spaces, tabs) at either end.
inline std::string_view TrimBlanks(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// Calls `on_line(line, number)` (a Status) for each line of `text`, in order; stops at and returns the first
// status that is not OK.
template <typename OnLine>
Status ForEachLine(std::string_view text, OnLine&& on_line) {
  size_t number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    PLANB_RETURN_IF_ERROR(on_line(line, ++number));
  }
  return Status::Ok();
}

}  // namespace planb
