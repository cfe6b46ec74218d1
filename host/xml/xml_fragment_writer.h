// Serialises expat events (namespace processing on, triplets on) back into a self-contained XML fragment: the
// content of one <value>. Internal to host/xml.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace planb {

// Separator given to XML_ParserCreateNS. U+0001 cannot occur in an XML 1.0 name or namespace URI (expat refuses
// even &#1;), so splitting on it is unambiguous.
inline constexpr char kExpatNsSeparator = '\x01';

// An expat name "uri<sep>local<sep>prefix" split apart; uri and prefix are empty when absent.
struct ExpatName {
  std::string_view uri;
  std::string_view local;
  std::string_view prefix;
};
ExpatName SplitExpatName(const char* name);

// One xmlns / xmlns:p attribute as written. Empty prefix = default namespace; empty uri = xmlns="" (undeclare).
struct NamespaceDecl {
  std::string prefix;
  std::string uri;
};

// Builds one fragment at a time. Namespaces: declarations written inside the fragment are kept; any (prefix, uri)
// an element or prefixed attribute uses that the output has not declared in scope is declared on that element,
// so the fragment parses alone. Comments and processing instructions never reach it (no handler is set).
// Not thread-safe; reuse one writer for many fragments (buffers keep their capacity).
class XmlFragmentWriter {
 public:
  // Starts a new fragment whose content so far is `leading_text` (raw text, escaped here).
  void Reset(std::string_view leading_text);

  // `name` and `attrs` as expat passes them; `decls` are the declarations written on this element.
  void StartElement(const char* name, const char** attrs, const std::vector<NamespaceDecl>& decls);
  void EndElement();
  void Text(std::string_view text);

  // The fragment with the whitespace around it trimmed. REQUIRES: every started element has ended.
  // The view is valid until the next Reset.
  std::string_view Finish() const;

 private:
  // The uri `prefix` is bound to in the output, or false when unbound.
  bool Lookup(std::string_view prefix, std::string_view* uri) const;
  // Declares (prefix, uri) on the current start tag unless the output already binds it so.
  void Ensure(std::string_view prefix, std::string_view uri);
  void CloseStartTag();

  std::string out_;
  std::vector<NamespaceDecl> scope_;     // bindings in the output, innermost last
  std::vector<size_t> scope_marks_;      // scope_.size() when each open element started
  std::vector<std::string> open_names_;  // qualified names of the open elements, for their end tags
  size_t open_count_ = 0;                // open_names_ entries in use (kept to reuse their capacity)
  bool start_tag_open_ = false;          // "<a ..." written without its '>' yet, so an empty element can be "/>"
};

}  // namespace planb
