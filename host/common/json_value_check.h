// Whether a text is one JSON value (RFC 8259, UTF-8): what a value stored as ValueType::kJson must be, since
// output embeds it as it is (lookup and query --format json, enrich). Checked where such values come from outside
// the process: an uploaded batch's rows (the verifier child, host/storage/lmdb_check.cc).
// Thread-safety: one checker per thread (it keeps simdjson's parser and a padded copy).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace planb {

class JsonValueCheck {
 public:
  JsonValueCheck();
  ~JsonValueCheck();
  JsonValueCheck(const JsonValueCheck&) = delete;
  JsonValueCheck& operator=(const JsonValueCheck&) = delete;

  // True when `text` is exactly one JSON value (white space around allowed); else `*why` says what is wrong.
  bool Check(std::string_view text, std::string* why);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
  std::string copy_;
};

// `valid` (one JSON value, as Check accepts) without the white space between tokens; strings and numbers keep
// their exact text.
void MinifyJson(std::string_view valid, std::string* out);

}  // namespace planb
