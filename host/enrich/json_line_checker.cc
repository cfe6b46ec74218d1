#include "host/enrich/json_line_checker.h"

#include <simdjson.h>

#include "host/enrich/json_text.h"

namespace planb {

struct JsonLineChecker::Parser {
  simdjson::dom::parser dom;
};

JsonLineChecker::JsonLineChecker() : parser_(std::make_unique<Parser>()) {}
JsonLineChecker::~JsonLineChecker() = default;

size_t JsonLineChecker::Padding() { return simdjson::SIMDJSON_PADDING; }

bool JsonLineChecker::Check(std::string_view line, bool padded, std::string* why) {
  if (!padded) {
    copy_.assign(line);
    copy_.append(Padding(), '\0');
    line = std::string_view(copy_.data(), line.size());
  }
  simdjson::dom::element root;
  const simdjson::error_code error = parser_->dom.parse(line.data(), line.size(), false).get(root);
  if (error == simdjson::SUCCESS) {
    if (root.is_object()) return true;
    *why = "not an object";
    return false;
  }
  // simdjson refuses numbers it cannot represent; RFC 8259 does not (UTF-8 and the structure up to there are
  // checked by then, since its number parsing runs last).
  if (error == simdjson::NUMBER_ERROR && IsJsonGrammar(line, true)) return true;
  *why = simdjson::error_message(error);
  return false;
}

}  // namespace planb
