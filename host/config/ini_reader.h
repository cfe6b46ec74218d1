// INI text read with Boost.Program_options, kept as sections in file order. Internal to host/config.
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
// order, including headers with no keys. Refuses "[]", a line that is neither "[header]" nor
// "key = value", and an empty key; the message starts with `name` (the file).
Status ReadIni(std::string_view name, std::string_view text, std::vector<IniSection>* sections);

}  // namespace planb
