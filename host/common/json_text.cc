#include "host/common/json_text.h"

#include <cstdint>
#include <cstring>

#include "host/common/log_text.h"

namespace planb {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

// s[i] is '"': the index after the closing quote (s.size() when unterminated). Strings hold most of an event's
// bytes (requests, user agents), so the search for the quote goes by memchr: a quote ends the string unless an
// odd number of backslashes precedes it.
size_t SkipString(std::string_view s, size_t i) {
  for (++i; i < s.size();) {
    const void* found = std::memchr(s.data() + i, '"', s.size() - i);
    if (found == nullptr) return s.size();
    const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - s.data());
    size_t backslashes = 0;
    while (quote - backslashes > i && s[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    i = quote + 1;
  }
  return s.size();
}

// The index after the value starting at s[i].
size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return s.size();
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = SkipString(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return s.size();
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !IsSpace(s[i])) ++i;
  return i;
}

// Whether the string token `raw` (with quotes) spells `name`.
bool NameIs(std::string_view raw, std::string_view name) {
  const std::string_view inner = raw.substr(1, raw.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner == name;
  thread_local std::string scratch;
  return JsonStringText(raw, &scratch) == name;
}

struct MemberSearch {
  bool found = false;
  size_t value_begin = 0;  // found
  size_t value_end = 0;
  size_t close = 0;        // not found: the index of the object's '}'
  bool empty = false;      // not found: the object has no members
};

// Looks `name` up among the members of the object starting at s[open] ('{').
bool FindMember(std::string_view s, size_t open, std::string_view name, MemberSearch* out) {
  size_t i = SkipSpace(s, open + 1);
  out->empty = i < s.size() && s[i] == '}';
  while (i < s.size()) {
    if (s[i] == '}') {
      out->found = false;
      out->close = i;
      return true;
    }
    if (s[i] != '"') return false;
    const size_t name_end = SkipString(s, i);
    const std::string_view raw_name = s.substr(i, name_end - i);
    i = SkipSpace(s, name_end);
    if (i >= s.size() || s[i] != ':') return false;
    i = SkipSpace(s, i + 1);
    const size_t value_end = SkipValue(s, i);
    if (raw_name.size() >= 2 && NameIs(raw_name, name)) {
      out->found = true;
      out->value_begin = i;
      out->value_end = value_end;
      return true;
    }
    i = SkipSpace(s, value_end);
    if (i < s.size() && s[i] == ',') i = SkipSpace(s, i + 1);
  }
  return false;
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

bool Hex4(std::string_view s, size_t i, uint32_t* out) {
  if (i + 4 > s.size()) return false;
  uint32_t v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const char c = s[k];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
    else return false;
  }
  *out = v;
  return true;
}

// The length of the UTF-8 sequence at s[i], 0 when it is not one (overlong, surrogate, past U+10FFFF, cut).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t min = 0;
  uint32_t code = 0;
  if ((c & 0xE0) == 0xC0) n = 2, min = 0x80, code = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800, code = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000, code = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (b(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// ---- The grammar check (IsJsonGrammar): a recursive descent with a depth bound, returning the index after the
// value or npos.
constexpr size_t kBad = std::string_view::npos;
constexpr int kMaxDepth = 1024;  // simdjson's own default bound

size_t CheckValue(std::string_view s, size_t i, int depth);

size_t CheckString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"') return i + 1;
    if (c < 0x20) return kBad;
    if (c != '\\') continue;
    if (++i >= s.size()) return kBad;
    const char e = s[i];
    if (e == 'u') {
      uint32_t ignored;
      if (!Hex4(s, i + 1, &ignored)) return kBad;
      i += 4;
    } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') {
      return kBad;
    }
  }
  return kBad;
}

size_t CheckNumber(std::string_view s, size_t i) {
  const auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return kBad;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    if (!digit(++i)) return kBad;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return kBad;
    while (digit(i)) ++i;
  }
  return i;
}

size_t CheckContainer(std::string_view s, size_t i, int depth, bool object) {
  if (depth >= kMaxDepth) return kBad;
  const char close = object ? '}' : ']';
  i = SkipSpace(s, i + 1);
  if (i < s.size() && s[i] == close) return i + 1;
  for (;;) {
    if (object) {
      if (i >= s.size() || s[i] != '"') return kBad;
      i = CheckString(s, i);
      if (i == kBad) return kBad;
      i = SkipSpace(s, i);
      if (i >= s.size() || s[i] != ':') return kBad;
      i = SkipSpace(s, i + 1);
    }
    i = CheckValue(s, i, depth + 1);
    if (i == kBad) return kBad;
    i = SkipSpace(s, i);
    if (i >= s.size()) return kBad;
    if (s[i] == close) return i + 1;
    if (s[i] != ',') return kBad;
    i = SkipSpace(s, i + 1);
  }
}

size_t CheckLiteral(std::string_view s, size_t i, std::string_view word) {
  return s.substr(i, word.size()) == word ? i + word.size() : kBad;
}

size_t CheckValue(std::string_view s, size_t i, int depth) {
  if (i >= s.size()) return kBad;
  switch (s[i]) {
    case '"': return CheckString(s, i);
    case '{': return CheckContainer(s, i, depth, true);
    case '[': return CheckContainer(s, i, depth, false);
    case 't': return CheckLiteral(s, i, "true");
    case 'f': return CheckLiteral(s, i, "false");
    case 'n': return CheckLiteral(s, i, "null");
    default: return CheckNumber(s, i);
  }
}

// `json` with path.parts[from...] as nested members holding `value_json`, added before the '}' at `close`.
void AppendInsertion(std::string_view json, size_t close, bool empty, const JsonPath& path, size_t from,
                     std::string_view value_json, std::string* out) {
  out->append(json.substr(0, close));
  if (!empty) out->push_back(',');
  for (size_t q = from; q < path.parts.size(); ++q) {
    AppendJsonString(path.parts[q], out);
    out->push_back(':');
    if (q + 1 < path.parts.size()) out->push_back('{');
  }
  out->append(value_json);
  out->append(path.parts.size() - from - 1, '}');
  out->append(json.substr(close));
}

}  // namespace

void InsertAtTopLevelEnd(std::string_view json, const JsonPath& path, std::string_view value_json,
                         std::string* out) {
  // The top-level object's '}' is the last one of the text; what precedes it is '{' only when it is empty.
  const size_t close = json.rfind('}');
  size_t before = close;
  while (before > 0 && IsSpace(json[before - 1])) --before;
  AppendInsertion(json, close, before > 0 && json[before - 1] == '{', path, 0, value_json, out);
}

Status ParseJsonPath(std::string_view text, JsonPath* out) {
  const auto refuse = [text](const std::string& why) {
    return Status::Invalid("'" + LogValue(text) + "' is not a field path: " + why);
  };
  if (text.empty()) return refuse("it is empty");
  JsonPath path;
  path.text = std::string(text);
  std::string part;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '.') {
      if (part.empty()) return refuse("it has an empty part (write member names joined by dots: client.ip)");
      path.parts.push_back(std::move(part));
      part.clear();
    } else if (text[i] == '\\') {
      if (i + 1 == text.size() || (text[i + 1] != '.' && text[i + 1] != '\\')) {
        return refuse("a backslash escapes only a dot or a backslash (a member named a.b: a\\.b)");
      }
      part.push_back(text[++i]);
    } else {
      part.push_back(text[i]);
    }
  }
  *out = std::move(path);
  return Status::Ok();
}

std::string JsonPathText(const std::vector<std::string>& parts) {
  std::string text;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (p != 0) text.push_back('.');
    for (char c : parts[p]) {
      if (c == '.' || c == '\\') text.push_back('\\');
      text.push_back(c);
    }
  }
  return text;
}

bool FindJsonValue(std::string_view json, const JsonPath& path, std::string_view* raw) {
  size_t i = SkipSpace(json, 0);
  for (size_t p = 0; p < path.parts.size(); ++p) {
    if (i >= json.size() || json[i] != '{') return false;
    MemberSearch member;
    if (!FindMember(json, i, path.parts[p], &member) || !member.found) return false;
    if (p + 1 == path.parts.size()) {
      *raw = json.substr(member.value_begin, member.value_end - member.value_begin);
      return true;
    }
    i = member.value_begin;
  }
  return false;
}

JsonWrite WriteJsonValue(std::string_view json, const JsonPath& path, std::string_view value_json, std::string* out) {
  size_t i = SkipSpace(json, 0);
  for (size_t p = 0; p < path.parts.size(); ++p) {
    MemberSearch member;
    if (i >= json.size() || json[i] != '{' || !FindMember(json, i, path.parts[p], &member)) {
      out->append(json);
      return JsonWrite::kBlocked;
    }
    if (member.found && p + 1 == path.parts.size()) {
      out->append(json.substr(0, member.value_begin));
      out->append(value_json);
      out->append(json.substr(member.value_end));
      return JsonWrite::kReplaced;
    }
    if (member.found) {
      i = member.value_begin;
      continue;
    }
    AppendInsertion(json, member.close, member.empty, path, p, value_json, out);
    return JsonWrite::kInserted;
  }
  out->append(json);
  return JsonWrite::kBlocked;
}

std::string_view JsonStringText(std::string_view raw, std::string* scratch) {
  const std::string_view inner = raw.substr(1, raw.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner;
  scratch->clear();
  for (size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (c != '\\' || i + 1 >= inner.size()) {
      scratch->push_back(c);
      continue;
    }
    const char e = inner[++i];
    switch (e) {
      case 'b': scratch->push_back('\b'); break;
      case 'f': scratch->push_back('\f'); break;
      case 'n': scratch->push_back('\n'); break;
      case 'r': scratch->push_back('\r'); break;
      case 't': scratch->push_back('\t'); break;
      case 'u': {
        uint32_t code = 0;
        if (!Hex4(inner, i + 1, &code)) break;
        i += 4;
        uint32_t low = 0;
        if (code >= 0xD800 && code <= 0xDBFF && i + 2 < inner.size() && inner[i + 1] == '\\' &&
            inner[i + 2] == 'u' && Hex4(inner, i + 3, &low) && low >= 0xDC00 && low <= 0xDFFF) {
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        } else if (code >= 0xD800 && code <= 0xDFFF) {
          code = 0xFFFD;  // a lone surrogate has no UTF-8 form
        }
        AppendUtf8(code, scratch);
        break;
      }
      default: scratch->push_back(e);  // " \ /
    }
  }
  return *scratch;
}

void AppendJsonString(std::string_view text, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(text, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");
        ++i;
      } else {
        out->append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

bool IsJsonGrammar(std::string_view text, bool object) {
  const size_t start = SkipSpace(text, 0);
  if (object && (start >= text.size() || text[start] != '{')) return false;
  const size_t end = CheckValue(text, start, 0);
  return end != kBad && SkipSpace(text, end) == text.size();
}

}  // namespace planb
