// Inside tabular_reader: the row texts both formats find, made into records (tabular_reader.cc), and the two
// readers (csv_rows.cc, jsonl_rows.cc). Not thread-safe.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

#include "host/common/json_text.h"  // AppendJsonString
#include "host/ingest/tabular_reader.h"

namespace planb {

// One row's text per role the spec names (roles it does not name are ignored); views valid during Hand.
struct RowTexts {
  std::string_view key;
  std::string_view from;
  std::string_view to;
  std::string_view time;
  std::string_view timeout;
  std::string_view value;  // --value, or the built --value-json object
  bool value_is_json = false;  // `value` is JSON text: --value-json's object, a JSON line's non-string --value
};

class TabularRows {
 public:
  // None owned; all must outlive this.
  TabularRows(const std::string& name, const TabularSpec& spec, int64_t effective_time_ms,
              const RecordHandler& handler);

  // Checks the texts (a key not empty, a time and timeout that parse), makes the record and hands it on.
  // Errors, the handler's too, come back as "name:LINE: what".
  Status Hand(uint64_t line, const RowTexts& texts);

  // "name:LINE: what", as an InvalidArgument.
  Status Fail(uint64_t line, const std::string& what) const;

  const std::string& name() const { return name_; }
  const TabularSpec& spec() const { return spec_; }

 private:
  const std::string& name_;
  const TabularSpec& spec_;
  const int64_t effective_time_ms_;
  const RecordHandler& handler_;
  std::string map_;  // lower-cased
};

// At most this many characters of input are quoted back in an error.
std::string QuoteText(std::string_view text);

Status ReadCsvRows(std::istream& in, TabularRows* rows);
Status ReadJsonLines(std::istream& in, TabularRows* rows);

}  // namespace planb
