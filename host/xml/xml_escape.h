// Escaping text for XML 1.0 output: element content and double-quoted attribute values. Shared by the value
// fragment writer (host/xml) and the SVG chart of `planb bench`.
#pragma once

#include <string>
#include <string_view>

namespace planb {

// Appends `text` to `out` with '&', '<', '>' and '\r' as references ('>' so that "]]>" cannot appear; a literal
// '\r' would be read back as '\n'); with `attribute`, also '"', tab and newline (attribute normalisation would
// turn the last two into spaces). Other bytes are copied as they are: the caller keeps out what XML 1.0 cannot
// hold (control characters other than tab, newline and carriage return).
void AppendXmlEscaped(std::string* out, std::string_view text, bool attribute);

inline std::string XmlEscaped(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  AppendXmlEscaped(&out, text, attribute);
  return out;
}

}  // namespace planb
