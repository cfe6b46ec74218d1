#include "host/xml/reference_parser.h"

#include <algorithm>
#include <exception>
#include <new>
#include <utility>

#include "host/common/iso_time.h"

namespace planb {
namespace {

constexpr std::string_view kNamespace = "reference-data:2";

// Expat takes an int length; pieces larger than this are passed in several calls.
constexpr size_t kMaxExpatPiece = size_t{1} << 30;

// Longest input text quoted back in an error message.
constexpr size_t kMaxQuoted = 64;

constexpr const char* kFieldNames[] = {"map", "time", "key", "range", "from", "to", "value", "timeout"};

bool IsXmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsXmlSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsXmlSpace(s.back())) s.remove_suffix(1);
  return s;
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// ASCII folding only: the grammar's names are ASCII, and map names keep their UTF-8 bytes as written.
bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != lower[i]) return false;
  }
  return true;
}

std::string Quote(std::string_view text) {
  if (text.size() <= kMaxQuoted) return "'" + std::string(text) + "'";
  size_t n = kMaxQuoted;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 sequence
  return "'" + std::string(text.substr(0, n)) + "...'";
}

// "<p:name>" plus its namespace when that is not reference-data:2, so "wrong namespace" is visible.
std::string Describe(const ExpatName& n) {
  std::string s = "<";
  if (!n.prefix.empty()) s.append(n.prefix).append(":");
  s.append(n.local).append(">");
  if (n.uri.empty()) {
    s.append(" (no namespace)");
  } else if (n.uri != kNamespace) {
    s.append(" (namespace '").append(n.uri).append("')");
  }
  return s;
}

// The trampolines keep exceptions (bad_alloc, or one thrown by the record handler) from unwinding through
// expat's C frames.
template <typename Body>
void Guarded(Status* status, Body&& body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    *status = Status(Code::kFull, "out of memory reading reference data");
  } catch (const std::exception& e) {
    *status = Status::Internal(e.what());
  } catch (...) {
    *status = Status::Internal("unknown exception reading reference data");
  }
}

}  // namespace

ReferenceParser::ReferenceParser(std::string name, int64_t effective_time_ms, const RecordHandler& handler)
    : name_(std::move(name)),
      effective_time_ms_(effective_time_ms),
      handler_(handler),
      parser_(XML_ParserCreateNS(nullptr, kExpatNsSeparator)) {
  if (parser_ == nullptr) {
    status_ = Status(Code::kFull, name_ + ": cannot create an XML parser (out of memory)");
    return;
  }
  XML_SetReturnNSTriplet(parser_, 1);  // prefixes, so fragments keep the ones written
  XML_SetUserData(parser_, this);
  XML_SetElementHandler(parser_, &OnStartElement, &OnEndElement);
  XML_SetCharacterDataHandler(parser_, &OnText);
  XML_SetStartNamespaceDeclHandler(parser_, &OnNamespaceDecl);
  // Entities: an external one would be skipped silently (expat reads no files here) and an internal one is a way
  // to amplify input, so a DTD declaring any is refused, and so is a reference expat would skip (one an unread
  // external subset might declare). Predefined entities and character references are unaffected.
  XML_SetParamEntityParsing(parser_, XML_PARAM_ENTITY_PARSING_NEVER);
  XML_SetEntityDeclHandler(parser_, &OnEntityDecl);
  XML_SetSkippedEntityHandler(parser_, &OnSkippedEntity);
  XML_SetExternalEntityRefHandler(parser_, &OnExternalEntityRef);
}

ReferenceParser::~ReferenceParser() {
  if (parser_ != nullptr) XML_ParserFree(parser_);
}

Status ReferenceParser::Feed(const char* data, size_t size, bool last) {
  while (status_.ok()) {
    const size_t n = std::min(size, kMaxExpatPiece);
    const bool final = last && n == size;
    if (XML_Parse(parser_, data, static_cast<int>(n), final) == XML_STATUS_ERROR && status_.ok()) {
      Fail(XML_GetErrorLineNumber(parser_), XML_GetErrorColumnNumber(parser_) + 1,
           std::string("malformed XML: ") + XML_ErrorString(XML_GetErrorCode(parser_)));
    }
    data += n;
    size -= n;
    if (size == 0) break;
  }
  return status_;
}

void XMLCALL ReferenceParser::OnStartElement(void* self, const XML_Char* name, const XML_Char** attrs) {
  auto* p = static_cast<ReferenceParser*>(self);
  if (!p->status_.ok()) return;
  Status error;
  Guarded(&error, [&] { p->StartElement(name, attrs); });
  if (!error.ok()) p->Stop(std::move(error));
}

void XMLCALL ReferenceParser::OnEndElement(void* self, const XML_Char*) {
  auto* p = static_cast<ReferenceParser*>(self);
  if (!p->status_.ok()) return;
  Status error;
  Guarded(&error, [&] { p->EndElement(); });
  if (!error.ok()) p->Stop(std::move(error));
}

void XMLCALL ReferenceParser::OnText(void* self, const XML_Char* text, int len) {
  auto* p = static_cast<ReferenceParser*>(self);
  if (!p->status_.ok()) return;
  Status error;
  Guarded(&error, [&] { p->Text(std::string_view(text, static_cast<size_t>(len))); });
  if (!error.ok()) p->Stop(std::move(error));
}

void XMLCALL ReferenceParser::OnEntityDecl(void* self, const XML_Char* name, int is_parameter_entity,
                                           const XML_Char*, int, const XML_Char*, const XML_Char*,
                                           const XML_Char*, const XML_Char*) {
  auto* p = static_cast<ReferenceParser*>(self);
  if (!p->status_.ok()) return;
  Status error;
  Guarded(&error, [&] {
    p->FailHere(std::string(is_parameter_entity ? "parameter " : "") + "entity declaration " + Quote(name) +
                " in the DTD: entities are not supported (write the text itself, or a character reference such "
                "as &#x263A;)");
  });
  if (!error.ok()) p->Stop(std::move(error));
}

void XMLCALL ReferenceParser::OnSkippedEntity(void* self, const XML_Char* name, int is_parameter_entity) {
  auto* p = static_cast<ReferenceParser*>(self);
  if (!p->status_.ok()) return;
  Status error;
  Guarded(&error, [&] {
    p->FailHere(std::string("undefined ") + (is_parameter_entity ? "parameter " : "") + "entity " + Quote(name) +
                " (a DTD's external subset is never read; entities are not supported)");
  });
  if (!error.ok()) p->Stop(std::move(error));
}

// Not reached while every entity declaration is refused; refuses rather than let expat skip the entity.
int XMLCALL ReferenceParser::OnExternalEntityRef(XML_Parser parser, const XML_Char*, const XML_Char*,
                                                 const XML_Char*, const XML_Char*) {
  auto* p = static_cast<ReferenceParser*>(XML_GetUserData(parser));
  if (p->status_.ok()) p->FailHere("external entity reference: entities are not supported");
  return XML_STATUS_ERROR;
}

void XMLCALL ReferenceParser::OnNamespaceDecl(void* self, const XML_Char* prefix, const XML_Char* uri) {
  auto* p = static_cast<ReferenceParser*>(self);
  if (!p->status_.ok()) return;
  Status error;
  Guarded(&error, [&] {
    p->decls_.push_back(NamespaceDecl{prefix != nullptr ? prefix : "", uri != nullptr ? uri : ""});
  });
  if (!error.ok()) p->Stop(std::move(error));
}

void ReferenceParser::StartElement(const char* name, const char** attrs) {
  if (in_value_) {
    if (pending_.value_is_json) {
      FailHere("<value type=\"json\"> holds JSON text, found element " + Describe(SplitExpatName(name)));
      return;
    }
    if (!pending_.value_is_xml) {
      fragment_.Reset(pending_.value);
      pending_.value_is_xml = true;
    }
    fragment_.StartElement(name, attrs, decls_);
    ++value_depth_;
  } else {
    const ExpatName n = SplitExpatName(name);
    switch (depth_) {
      case 0:
        StartRoot(n);
        break;
      case 1:
        StartRecord(n);
        break;
      case 2:
        StartField(n, attrs);
        break;
      case 3:
        if (field_ == Field::kRange) {
          StartRangeChild(n);
        } else {
          FailHere("<" + std::string(kFieldNames[static_cast<int>(field_)]) + "> must hold only text, found " +
                   Describe(n));
        }
        break;
      default:
        FailHere("<" + std::string(kFieldNames[static_cast<int>(range_child_)]) + "> must hold only text, found " +
                 Describe(n));
        break;
    }
    ++depth_;
  }
  decls_.clear();
}

void ReferenceParser::StartRoot(const ExpatName& n) {
  if (!EqualsIgnoreCase(n.local, "referencedata") || n.uri != kNamespace) {
    FailHere("root element is " + Describe(n) + "; expected <referenceData> in namespace " + std::string(kNamespace));
  }
}

void ReferenceParser::StartRecord(const ExpatName& n) {
  if (n.uri == kNamespace && EqualsIgnoreCase(n.local, "reference")) {
    pending_.kind = RecordKind::kReference;
  } else if (n.uri == kNamespace && EqualsIgnoreCase(n.local, "session")) {
    pending_.kind = RecordKind::kSession;
  } else {
    FailHere("unknown element " + Describe(n) + " in <referenceData>; expected <reference> or <session>");
    return;
  }
  pending_.line = Line();
  pending_.column = Column();
  std::fill(std::begin(pending_.seen), std::end(pending_.seen), false);
  pending_.value_is_xml = false;
  pending_.value_is_json = false;
}

void ReferenceParser::StartField(const ExpatName& n, const char** attrs) {
  const bool reference = pending_.kind == RecordKind::kReference;
  Field f = Field::kNone;
  if (n.uri == kNamespace) {
    for (int i = 0; i < static_cast<int>(Field::kCount); ++i) {
      if (EqualsIgnoreCase(n.local, kFieldNames[i])) f = static_cast<Field>(i);
    }
  }
  const bool allowed = reference ? f != Field::kTimeout && f != Field::kNone
                                 : f == Field::kMap || f == Field::kKey || f == Field::kTime || f == Field::kTimeout;
  if (!allowed) {
    FailHere("unknown element " + Describe(n) + " in <" + RecordName() + ">; expected " +
             (reference ? "map, time, key, range, from, to or value" : "map, key, time or timeout"));
    return;
  }
  const bool* seen = pending_.seen;
  if (f == Field::kKey && (seen[static_cast<int>(Field::kFrom)] || seen[static_cast<int>(Field::kTo)])) {
    FailHere("<reference> has both a range and a <key>");
    return;
  }
  if ((f == Field::kRange || f == Field::kFrom || f == Field::kTo) && seen[static_cast<int>(Field::kKey)]) {
    FailHere("<reference> has both a <key> and a range");
    return;
  }
  if (f == Field::kRange && (seen[static_cast<int>(Field::kFrom)] || seen[static_cast<int>(Field::kTo)])) {
    FailHere("<range> given as well as a bare <from>/<to>");
    return;
  }
  std::string* text = nullptr;
  switch (f) {
    case Field::kMap:
      text = &pending_.map;
      break;
    case Field::kTime:
      text = &pending_.time;
      break;
    case Field::kKey:
      text = &pending_.key;
      break;
    case Field::kFrom:
      text = &pending_.from;
      break;
    case Field::kTo:
      text = &pending_.to;
      break;
    case Field::kTimeout:
      text = &pending_.timeout;
      break;
    case Field::kValue:
      text = &pending_.value;
      break;
    default:
      break;
  }
  if (!BeginField(f, RecordName(), text)) return;
  field_ = f;
  if (f == Field::kValue) {
    if (!ReadValueType(attrs)) return;
    text_ = nullptr;  // Text() routes value content itself: it may turn into a fragment
    in_value_ = true;
    value_depth_ = 0;
  }
}

// <value type="json">: the value is JSON text (ValueType::kJson). Other attributes of <value> are ignored, as
// Stroom's files may carry their own; an unknown type is an error, never silently a string.
bool ReferenceParser::ReadValueType(const char** attrs) {
  pending_.value_is_json = false;
  for (const char** a = attrs; a != nullptr && a[0] != nullptr; a += 2) {
    if (std::string_view(a[0]) != "type") continue;
    if (std::string_view(a[1]) == "json") {
      pending_.value_is_json = true;
    } else {
      FailHere("<value type=" + Quote(a[1]) + ">: unknown value type; the one known is type=\"json\"");
      return false;
    }
  }
  return true;
}

void ReferenceParser::StartRangeChild(const ExpatName& n) {
  Field f = Field::kNone;
  if (n.uri == kNamespace && EqualsIgnoreCase(n.local, "from")) f = Field::kFrom;
  if (n.uri == kNamespace && EqualsIgnoreCase(n.local, "to")) f = Field::kTo;
  if (f == Field::kNone) {
    FailHere("unknown element " + Describe(n) + " in <range>; expected <from> or <to>");
    return;
  }
  if (BeginField(f, "range", f == Field::kFrom ? &pending_.from : &pending_.to)) range_child_ = f;
}

bool ReferenceParser::BeginField(Field f, const char* parent, std::string* text) {
  const int i = static_cast<int>(f);
  if (pending_.seen[i]) {
    FailHere("duplicate <" + std::string(kFieldNames[i]) + "> in <" + parent + ">");
    return false;
  }
  pending_.seen[i] = true;
  pending_.field_line[i] = Line();
  pending_.field_column[i] = Column();
  if (text != nullptr) text->clear();
  text_ = text;
  return true;
}

void ReferenceParser::EndElement() {
  if (in_value_ && value_depth_ > 0) {
    fragment_.EndElement();
    --value_depth_;
    return;
  }
  --depth_;
  text_ = nullptr;
  if (depth_ == 3) {
    EndField(range_child_);
    range_child_ = Field::kNone;
  } else if (depth_ == 2) {
    EndField(field_);
    field_ = Field::kNone;
  } else if (depth_ == 1) {
    EndRecord();
  }
}

void ReferenceParser::EndField(Field f) {
  switch (f) {
    case Field::kMap:
      if (Trim(pending_.map).empty()) FailAtField(f, "empty <map>");
      break;
    case Field::kKey:
      if (pending_.key.empty()) FailAtField(f, "empty <key>");
      break;
    case Field::kTime:
      if (!ParseIsoTime(Trim(pending_.time), &pending_.time_ms)) {
        FailAtField(f, "unreadable <time> " + Quote(Trim(pending_.time)) +
                           ": expected an ISO-8601 date-time such as 2024-01-01T08:10:22.023Z");
      }
      break;
    case Field::kTimeout:
      if (!ParseDuration(Trim(pending_.timeout), &pending_.timeout_ms)) {
        FailAtField(f, "unreadable <timeout> " + Quote(Trim(pending_.timeout)) +
                           ": expected a duration such as 15m, 30s, 500ms or PT15M");
      }
      break;
    case Field::kRange:
      if (!pending_.seen[static_cast<int>(Field::kFrom)]) {
        FailAtField(f, "<range> without <from>");
      } else if (!pending_.seen[static_cast<int>(Field::kTo)]) {
        FailAtField(f, "<range> without <to>");
      }
      break;
    case Field::kValue:
      in_value_ = false;
      if (pending_.value_is_json) {
        // Checked once here, so stored JSON is always one value; minified, so that output embedding it
        // (enrich's JSON lines, lookup --format json) stays one line whatever the file's layout.
        if (json_check_ == nullptr) json_check_ = std::make_unique<JsonValueCheck>();
        const std::string_view text = Trim(pending_.value);
        if (!json_check_->Check(text, &json_why_)) {
          FailAtField(f, "<value type=\"json\"> is not one JSON value (" + json_why_ + "): " + Quote(text));
          break;
        }
        MinifyJson(text, &json_minified_);
        pending_.value.swap(json_minified_);
      }
      break;
    default:
      break;
  }
}

bool ReferenceParser::CheckRecord() {
  const bool* seen = pending_.seen;
  auto has = [seen](Field f) { return seen[static_cast<int>(f)]; };
  const std::string record = std::string("<") + RecordName() + ">";
  if (!has(Field::kMap)) {
    Fail(pending_.line, pending_.column, record + " without <map>");
  } else if (pending_.kind == RecordKind::kSession) {
    if (!has(Field::kKey)) {
      Fail(pending_.line, pending_.column, record + " without <key>");
    } else if (!has(Field::kTime)) {
      Fail(pending_.line, pending_.column, record + " without <time>");
    }
  } else if (!has(Field::kKey) && !has(Field::kFrom) && !has(Field::kTo)) {
    Fail(pending_.line, pending_.column, record + " without <key> or <range>");
  } else if (has(Field::kFrom) && !has(Field::kTo)) {
    FailAtField(Field::kFrom, "<from> without <to>");
  } else if (has(Field::kTo) && !has(Field::kFrom)) {
    FailAtField(Field::kTo, "<to> without <from>");
  }
  // A <reference> without <value> is well-formed (Record::has_value false): the store type decides (a histogram
  // counts it as 1; State and the others refuse it, and the load names the element's position).
  return status_.ok();
}

void ReferenceParser::EndRecord() {
  if (!CheckRecord()) return;
  const bool* seen = pending_.seen;
  auto has = [seen](Field f) { return seen[static_cast<int>(f)]; };
  lower_map_.assign(Trim(pending_.map));
  for (char& c : lower_map_) c = Lower(c);

  ParsedRecord out;
  out.map = lower_map_;
  out.line = pending_.line;
  out.column = pending_.column;
  Record& r = out.record;
  r.kind = pending_.kind;
  r.has_key = has(Field::kKey);
  // Keys are exact (" x" and "x" are two keys), unlike the structural fields around them.
  if (r.has_key) r.key = Bytes(pending_.key);
  r.has_range = has(Field::kFrom);
  if (r.has_range) {
    r.range_from = Bytes(Trim(pending_.from));
    r.range_to = Bytes(Trim(pending_.to));
  }
  r.time_given = has(Field::kTime);
  r.time_ms = r.time_given ? pending_.time_ms : effective_time_ms_;
  r.has_timeout = has(Field::kTimeout);
  if (r.has_timeout) r.timeout_ms = pending_.timeout_ms;
  r.has_value = has(Field::kValue);
  if (r.has_value) {
    r.value_type = pending_.value_is_xml    ? ValueType::kXmlFragment
                   : pending_.value_is_json ? ValueType::kJson
                                            : ValueType::kString;
    r.value = pending_.value_is_xml ? Bytes(fragment_.Finish()) : Bytes(pending_.value);
  }
  Status s = handler_(out);
  if (!s.ok()) Stop(Status(s.code(), Prefix(pending_.line, pending_.column) + s.message()));
}

void ReferenceParser::Text(std::string_view text) {
  if (in_value_) {
    if (pending_.value_is_xml) {
      fragment_.Text(text);
    } else {
      pending_.value.append(text);
    }
  } else if (text_ != nullptr) {
    text_->append(text);
  } else if (!Trim(text).empty()) {
    const char* where = depth_ == 1 ? "referenceData" : depth_ == 2 ? RecordName() : "range";
    FailHere("unexpected text " + Quote(Trim(text)) + " in <" + where + ">");
  }
}

void ReferenceParser::Stop(Status status) {
  if (!status_.ok()) return;
  status_ = std::move(status);
  XML_StopParser(parser_, XML_FALSE);
}

void ReferenceParser::Fail(uint64_t line, uint64_t column, const std::string& what) {
  Stop(Status::Invalid(Prefix(line, column) + what));
}

void ReferenceParser::FailHere(const std::string& what) { Fail(Line(), Column(), what); }

void ReferenceParser::FailAtField(Field f, const std::string& what) {
  const int i = static_cast<int>(f);
  Fail(pending_.field_line[i], pending_.field_column[i], what);
}

std::string ReferenceParser::Prefix(uint64_t line, uint64_t column) const {
  return name_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

uint64_t ReferenceParser::Line() const { return XML_GetCurrentLineNumber(parser_); }

// Expat counts columns from 0 (in characters, not bytes).
uint64_t ReferenceParser::Column() const { return XML_GetCurrentColumnNumber(parser_) + 1; }

const char* ReferenceParser::RecordName() const {
  return pending_.kind == RecordKind::kSession ? "session" : "reference";
}

}  // namespace planb
