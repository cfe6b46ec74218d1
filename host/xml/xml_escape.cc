#include "host/xml/xml_escape.h"

namespace planb {
namespace {

const char* Replacement(char c, bool attribute) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '\r':
      return "&#13;";
    case '"':
      return attribute ? "&quot;" : nullptr;
    case '\t':
      return attribute ? "&#9;" : nullptr;
    case '\n':
      return attribute ? "&#10;" : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

void AppendXmlEscaped(std::string* out, std::string_view text, bool attribute) {
  size_t run = 0;  // start of the text not yet copied
  for (size_t i = 0; i < text.size(); ++i) {
    const char* rep = Replacement(text[i], attribute);
    if (rep == nullptr) continue;
    out->append(text.data() + run, i - run);
    out->append(rep);
    run = i + 1;
  }
  out->append(text.data() + run, text.size() - run);
}

}  // namespace planb
