// One event line of planb enrich (host/common/json_line_checker.h, json_text.h), checked against itself:
//   - a line simdjson accepts is accepted by the grammar check too (the fallback never refuses valid JSON);
//   - reading a path from the parsed document and from the text agree (absent, or the same string text), and a
//     value read from the text is one JSON value;
//   - writing at a path gives a line the checker accepts in full, holding the value written there (unless a
//     member on the path is not an object); the top-level fast insert likewise.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "host/common/json_line_checker.h"
#include "host/common/json_text.h"

namespace {

const std::vector<planb::JsonPath>& Paths() {
  static const std::vector<planb::JsonPath> paths = [] {
    std::vector<planb::JsonPath> out;
    for (const char* text : {"a", "a.b", "b.c.d", "x", "\xC3\xA9", "a.a"}) {
      planb::JsonPath path;
      (void)planb::ParseJsonPath(text, &path);
      out.push_back(path);
    }
    return out;
  }();
  return paths;
}

size_t Nesting(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += c == '{' || c == '[';
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace planb;
  const std::string line(reinterpret_cast<const char*>(data), size);
  static JsonLineChecker checker;
  std::string why;
  if (!checker.Check(line, false, &why)) return 0;
  const bool parsed = checker.has_document();
  if (parsed && Nesting(line) < 1000) {  // past simdjson's depth bound, the two may differ on where it lies
    fuzz::Check(IsJsonGrammar(line, true), "simdjson accepts a line the grammar check refuses: " + line);
  }
  std::string scratch;
  for (const JsonPath& path : Paths()) {
    std::string_view raw;
    const bool found = FindJsonValue(line, path, &raw);
    if (found) fuzz::Check(IsJsonGrammar(raw, false), "FindJsonValue(" + path.text + ") gave no JSON value: " + std::string(raw));
    if (parsed) {
      std::string_view text;
      const JsonFind in_document = checker.Find(path, &text);
      fuzz::Check((in_document != JsonFind::kAbsent) == found, "document and text disagree on " + path.text);
      if (in_document == JsonFind::kString) {
        const std::string kept(text);
        fuzz::Check(found && raw[0] == '"' && JsonStringText(raw, &scratch) == kept,
                    "document and text give different strings at " + path.text);
      }
    }
  }
  // Writes, each checked in full (the checker's document is replaced by each check, so the reads come first).
  for (const JsonPath& path : Paths()) {
    std::string out;
    const JsonWrite written = WriteJsonValue(line, path, "[1,\"w\"]", &out);
    if (written == JsonWrite::kBlocked) {
      fuzz::Check(out == line, "a blocked write changed the line");
      continue;
    }
    fuzz::Check(checker.Check(out, false, &why) || IsJsonGrammar(out, true), "a write made invalid JSON: " + out);
    std::string_view raw;
    fuzz::Check(FindJsonValue(out, path, &raw) && raw == "[1,\"w\"]", "the written value is not at " + path.text);
  }
  std::string_view unused;
  JsonPath head;
  (void)ParseJsonPath("zz_new", &head);
  if (!FindJsonValue(line, head, &unused)) {
    std::string out;
    InsertAtTopLevelEnd(line, head, "2", &out);
    fuzz::Check(IsJsonGrammar(out, true), "the top-level insert made invalid JSON: " + out);
    std::string_view raw;
    fuzz::Check(FindJsonValue(out, head, &raw) && raw == "2", "the top-level insert is not found");
  }
  return 0;
}
