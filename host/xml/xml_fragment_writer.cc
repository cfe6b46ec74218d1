#include "host/xml/xml_fragment_writer.h"

#include <cstring>

#include "host/xml/xml_escape.h"

namespace planb {
namespace {

// Bound in every document by the XML Namespaces spec; it must never be declared with another uri, so it is
// treated as always in scope.
constexpr std::string_view kXmlPrefix = "xml";
constexpr std::string_view kXmlNamespace = "http://www.w3.org/XML/1998/namespace";

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
  AppendXmlEscaped(out, uri, /*attribute=*/true);
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
  AppendXmlEscaped(&out_, leading_text, /*attribute=*/false);
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
    AppendXmlEscaped(&out_, a[1], /*attribute=*/true);
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
  AppendXmlEscaped(&out_, text, /*attribute=*/false);
}

std::string_view XmlFragmentWriter::Finish() const {
  size_t begin = 0, end = out_.size();
  while (begin < end && IsXmlSpace(out_[begin])) ++begin;
  while (end > begin && IsXmlSpace(out_[end - 1])) --end;
  return std::string_view(out_).substr(begin, end - begin);
}

}  // namespace planb
