#include "host/common/json_line_checker.h"

#include <simdjson.h>

#include "host/common/json_text.h"

namespace planb {

struct JsonLineChecker::Parser {
  simdjson::dom::parser dom;
  simdjson::dom::element root;
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
  has_document_ = false;
  simdjson::dom::element& root = parser_->root;
  const simdjson::error_code error = parser_->dom.parse(line.data(), line.size(), false).get(root);
  if (error == simdjson::SUCCESS) {
    has_document_ = root.is_object();
    if (has_document_) return true;
    switch (root.type()) {
      case simdjson::dom::element_type::ARRAY: *why = "an array"; break;
      case simdjson::dom::element_type::STRING: *why = "a string"; break;
      case simdjson::dom::element_type::BOOL: *why = "a boolean"; break;
      case simdjson::dom::element_type::NULL_VALUE: *why = "null"; break;
      default: *why = "a number";
    }
    return false;
  }
  // simdjson refuses numbers it cannot represent; RFC 8259 does not (UTF-8 and the structure up to there are
  // checked by then, since its number parsing runs last).
  if (error == simdjson::NUMBER_ERROR && IsJsonGrammar(line, true)) return true;
  *why = simdjson::error_message(error);
  return false;
}

JsonFind JsonLineChecker::Find(const JsonPath& path, std::string_view* text) const {
  simdjson::dom::element at = parser_->root;
  for (const std::string& part : path.parts) {
    simdjson::dom::object object;
    if (at.get_object().get(object) != simdjson::SUCCESS) return JsonFind::kAbsent;
    if (object.at_key(part).get(at) != simdjson::SUCCESS) return JsonFind::kAbsent;
  }
  switch (at.type()) {
    case simdjson::dom::element_type::STRING:
      return at.get_string().get(*text) == simdjson::SUCCESS ? JsonFind::kString : JsonFind::kOther;
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE:
      return JsonFind::kNumber;
    default:
      return JsonFind::kOther;
  }
}

}  // namespace planb
