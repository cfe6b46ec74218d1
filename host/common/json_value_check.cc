#include "host/common/json_value_check.h"

#include <simdjson.h>

#include "host/common/json_text.h"

namespace planb {

struct JsonValueCheck::Parser {
  simdjson::dom::parser dom;
};

JsonValueCheck::JsonValueCheck() : parser_(std::make_unique<Parser>()) {}
JsonValueCheck::~JsonValueCheck() = default;

bool JsonValueCheck::Check(std::string_view text, std::string* why) {
  copy_.assign(text);
  copy_.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element root;
  const simdjson::error_code error = parser_->dom.parse(copy_.data(), text.size(), false).get(root);
  if (error == simdjson::SUCCESS) return true;
  // simdjson refuses numbers it cannot represent (past 2^64, 1e400); RFC 8259 does not, and UTF-8 and the
  // structure up to them were checked by then.
  if (error == simdjson::NUMBER_ERROR && IsJsonGrammar(text, false)) return true;
  *why = simdjson::error_message(error);
  return false;
}

void MinifyJson(std::string_view valid, std::string* out) {
  out->resize(valid.size());
  size_t size = 0;
  if (simdjson::minify(valid.data(), valid.size(), out->data(), size) != simdjson::SUCCESS) {
    out->assign(valid);  // minify refuses only unterminated strings, which Check never accepts
    return;
  }
  out->resize(size);
}

}  // namespace planb
