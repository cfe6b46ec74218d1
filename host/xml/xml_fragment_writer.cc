#include "host/xml/xml_fragment_writer.h"

#include <cstring>

namespace planb {
namespace {

// Bound in every document by the XML Namespaces spec; it must never be declared with another uri, so it is
// treated as always in scope.
constexpr std::string_view kXmlPrefix = "xml";
constexpr std::string_view kXmlNamespace = "http://www.w3.org/XML/1998/namespace";

// '>' is escaped too so "]]>" in text cannot appear. '\r' survives only as a reference (a parser turns a literal
// one into '\n'); in attributes tab and newline need references too, or attribute normalisation makes them spaces.
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

void AppendEscaped(std::string* out, std::string_view text, bool attribute) {
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

void AppendQName(std::string* out, const ExpatName& n) {
  if (!n.prefix.empty()) {
    out->append(n.prefix);
    out->push_back(':');
  }
  out->append(n.local);
}

void AppendDecl(std::string* out, std::string_view prefix, std::string_view uri) {
  out->append(prefix.empty() ? " xmlns" : " xmlns:");
  out->append(prefix);
  out->append("=\"");
  AppendEscaped(out, uri, /*attribute=*/true);
  out->push_back('"');
}

bool IsXmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

ExpatName SplitExpatName(const char* name) {
  ExpatName n;
  const char* first = std::strchr(name, kExpatNsSeparator);
  if (first == nullptr) {
    n.local = name;
    return n;
  }
  n.uri = std::string_view(name, first - name);
  const char* local = first + 1;
  const char* second = std::strchr(local, kExpatNsSeparator);
  if (second == nullptr) {
    n.local = local;
  } else {
    n.local = std::string_view(local, second - local);
    n.prefix = second + 1;
  }
  return n;
}

void XmlFragmentWriter::Reset(std::string_view leading_text) {
  out_.clear();
  scope_.clear();
  scope_marks_.clear();
  open_count_ = 0;
  start_tag_open_ = false;
  AppendEscaped(&out_, leading_text, /*attribute=*/false);
}

bool XmlFragmentWriter::Lookup(std::string_view prefix, std::string_view* uri) const {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
    if (it->prefix == prefix) {
      *uri = it->uri;
      return true;
    }
  }
  if (prefix.empty()) {  // no default namespace declared: unprefixed names are in no namespace
    *uri = std::string_view();
    return true;
  }
  if (prefix == kXmlPrefix) {
    *uri = kXmlNamespace;
    return true;
  }
  return false;
}

void XmlFragmentWriter::Ensure(std::string_view prefix, std::string_view uri) {
  std::string_view bound;
  if (Lookup(prefix, &bound) && bound == uri) return;
  AppendDecl(&out_, prefix, uri);
  scope_.push_back(NamespaceDecl{std::string(prefix), std::string(uri)});
}

void XmlFragmentWriter::CloseStartTag() {
  if (start_tag_open_) {
    out_.push_back('>');
    start_tag_open_ = false;
  }
}

void XmlFragmentWriter::StartElement(const char* name, const char** attrs, const std::vector<NamespaceDecl>& decls) {
  CloseStartTag();
  const ExpatName element = SplitExpatName(name);
  scope_marks_.push_back(scope_.size());
  if (open_count_ == open_names_.size()) open_names_.emplace_back();
  std::string& qname = open_names_[open_count_++];
  qname.clear();
  AppendQName(&qname, element);

  out_.push_back('<');
  out_.append(qname);
  for (const NamespaceDecl& d : decls) {
    AppendDecl(&out_, d.prefix, d.uri);
    scope_.push_back(d);
  }
  Ensure(element.prefix, element.uri);
  for (const char** a = attrs; *a != nullptr; a += 2) {
    const ExpatName attr = SplitExpatName(a[0]);
    // Unprefixed attributes are in no namespace whatever the default is, so only prefixed ones need a binding.
    if (!attr.prefix.empty()) Ensure(attr.prefix, attr.uri);
  }
  for (const char** a = attrs; *a != nullptr; a += 2) {
    out_.push_back(' ');
    AppendQName(&out_, SplitExpatName(a[0]));
    out_.append("=\"");
    AppendEscaped(&out_, a[1], /*attribute=*/true);
    out_.push_back('"');
  }
  start_tag_open_ = true;
}

void XmlFragmentWriter::EndElement() {
  if (start_tag_open_) {
    out_.append("/>");
    start_tag_open_ = false;
  } else {
    out_.append("</");
    out_.append(open_names_[open_count_ - 1]);
    out_.push_back('>');
  }
  --open_count_;
  scope_.resize(scope_marks_.back());
  scope_marks_.pop_back();
}

void XmlFragmentWriter::Text(std::string_view text) {
  if (text.empty()) return;
  CloseStartTag();
  AppendEscaped(&out_, text, /*attribute=*/false);
}

std::string_view XmlFragmentWriter::Finish() const {
  size_t begin = 0, end = out_.size();
  while (begin < end && IsXmlSpace(out_[begin])) ++begin;
  while (end > begin && IsXmlSpace(out_[end - 1])) --end;
  return std::string_view(out_).substr(begin, end - begin);
}

}  // namespace planb
