// CSV and JSON lines for `planb load --format csv|jsonl` (host/common/csv.h, host/ingest/tabular_reader.h). The
// first byte picks the mode, the rest is the input:
//   bit 0 clear: CSV. CsvReader reads every record (comment lines skipped when bit 1 is set); the records read
//                before any error, written back with AppendCsvField and read again, must come back the same.
//                Then ReadTabular reads the input as a load would (--key a --value b, --value-json b,c with
//                bit 2, --columns a,b,c with bit 3).
//   bit 0 set:   JSON lines through ReadTabular: --key k with --value v, or --value-json v,w.x with bit 2,
//                --time t with bit 3.
// Beyond "no crash": a refusal has a message naming the input.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "host/common/csv.h"
#include "host/ingest/tabular_reader.h"

namespace {

using Records = std::vector<std::vector<std::string>>;

planb::Status ReadCsv(const std::string& text, bool comments, Records* out) {
  std::istringstream in(text);
  planb::CsvReader reader(in, "fuzz.csv", 1 << 16);
  reader.SkipCommentLines(comments);
  std::vector<std::string_view> fields;
  bool got = false;
  while (true) {
    planb::Status s = reader.Next(&fields, &got);
    if (!s.ok() || !got) return s;
    out->emplace_back(fields.begin(), fields.end());
  }
}

void CheckRefusal(const planb::Status& s, const char* name) {
  if (s.ok()) return;
  planb::fuzz::Check(s.message().rfind(name, 0) == 0, "a refusal does not name the input first");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  planb::TabularSpec spec;
  spec.map = "fuzz";
  spec.max_record_bytes = 1 << 16;
  if ((mode & 1) == 0) {
    Records first;
    const planb::Status s = ReadCsv(text, (mode & 2) != 0, &first);
    CheckRefusal(s, "fuzz.csv:");
    std::string again = "\xEF\xBB\xBF";  // so that a first field starting with one keeps it when read again
    for (const auto& record : first) {
      for (size_t i = 0; i < record.size(); ++i) {
        if (i > 0) again += ',';
        planb::AppendCsvField(record[i], &again);
      }
      if (record.size() == 1 && record[0].empty()) again += "\"\"";  // else an empty line, skipped
      again += "\r\n";
    }
    Records second;
    const planb::Status s2 = ReadCsv(again, false, &second);
    planb::fuzz::Check(s2.ok(), "records written back do not read again");
    planb::fuzz::Check(first == second, "records written back read differently");
    spec.key = "a";
    if ((mode & 4) != 0) {
      spec.value_json = {"b", "c"};
    } else {
      spec.value = "b";
    }
    if ((mode & 8) != 0) spec.columns = {"a", "b", "c"};
    spec.comments = (mode & 2) != 0;
  } else {
    spec.format = planb::TabularFormat::kJsonLines;
    spec.key = "k";
    if ((mode & 4) != 0) {
      spec.value_json = {"v", "w.x"};
    } else {
      spec.value = "v";
    }
    if ((mode & 8) != 0) spec.time = "t";
  }
  std::istringstream in(text);
  size_t records = 0;
  const planb::Status s = planb::ReadTabular(in, "fuzz.in", spec, 0, [&](const planb::ParsedRecord& r) {
    planb::fuzz::Check(r.record.has_key && r.record.key.size > 0, "a record without a key");
    ++records;
    return planb::Status::Ok();
  });
  CheckRefusal(s, "fuzz.in");
  return 0;
}
