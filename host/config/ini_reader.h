// INI text read exactly, line by line, kept as sections in file order. Internal to host/config.
//
// The rules (docs/security.md "Reading the config", README "Configuration"):
// - Lines end with LF or CRLF; a UTF-8 byte order mark at the start of the text is skipped.
// - A line whose first non-blank character is '#' or ';' is a comment; blank lines are skipped.
// - A lone '#' (at the line's start or after a blank, and followed by a blank or the line's end) starts a
//   comment running to the end of the line: `home = /h  # where`. Any other '#', and every ';', is text, so a
//   Z85 key (no blanks, 40 characters) is read exactly whatever it holds.
// - "[header]": the text between the brackets, trimmed. "key = value": the key is the text before the first
//   '=', the value all the text after it; both trimmed of blanks (space, tab). Nothing is unquoted.
// - Control characters other than tab are refused, as are "[]", an unclosed '[', a line that is neither a
//   header nor has an '=', and an empty key; the message names the file and the line.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planb/status.h"

namespace planb {

struct IniSection {
  std::string header;  // the text between [ and ], trimmed; "" for the keys before the first header
  // key, value in file order; a key may repeat (the caller decides whether it can).
  std::vector<std::pair<std::string, std::string>> entries;
};

// Splits `text` into sections: first the top-level one (header ""), then one per "[header]" in file
// order, including headers with no keys. Errors read "NAME: line N: ...", NAME being `name` (the file).
Status ReadIni(std::string_view name, std::string_view text, std::vector<IniSection>* sections);

}  // namespace planb
