// The push parser behind ReadReferenceData / ReadReferenceDataFile (reference_reader.h): expat plus the
// reference-data:2 grammar. Internal to host/xml; public here so tests can feed a document in arbitrary pieces.
#pragma once

#include <expat.h>

#include <memory>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/common/json_value_check.h"
#include "host/xml/reference_reader.h"
#include "host/xml/xml_fragment_writer.h"
#include "planb/status.h"

namespace planb {

class ReferenceParser {
 public:
  // `name` prefixes every error message. `handler` must outlive the parser.
  ReferenceParser(std::string name, int64_t effective_time_ms, const RecordHandler& handler);
  ~ReferenceParser();
  ReferenceParser(const ReferenceParser&) = delete;
  ReferenceParser& operator=(const ReferenceParser&) = delete;

  // Parses the next piece of the document (any split is fine, even inside a UTF-8 sequence); `last` marks the
  // final piece, which may be empty. The first error is returned again by every later call.
  Status Feed(const char* data, size_t size, bool last);

 private:
  enum class Field : int { kMap, kTime, kKey, kRange, kFrom, kTo, kValue, kTimeout, kCount, kNone = kCount };

  // The element being read; strings are reused across records so memory tracks the largest element.
  struct Pending {
    RecordKind kind = RecordKind::kReference;
    uint64_t line = 0, column = 0;
    bool seen[static_cast<int>(Field::kCount)] = {};
    uint64_t field_line[static_cast<int>(Field::kCount)] = {};
    uint64_t field_column[static_cast<int>(Field::kCount)] = {};
    std::string map, key, from, to, time, timeout, value;  // raw text; `value` only while it has no element
    int64_t time_ms = 0;
    int64_t timeout_ms = 0;
    bool value_is_xml = false;  // the value is in fragment_
    bool value_is_json = false;  // <value type="json">: text that must be one JSON value, stored minified
  };

  static void XMLCALL OnStartElement(void* self, const XML_Char* name, const XML_Char** attrs);
  static void XMLCALL OnEndElement(void* self, const XML_Char* name);
  static void XMLCALL OnText(void* self, const XML_Char* text, int len);
  static void XMLCALL OnNamespaceDecl(void* self, const XML_Char* prefix, const XML_Char* uri);
  static void XMLCALL OnEntityDecl(void* self, const XML_Char* name, int is_parameter_entity, const XML_Char* value,
                                  int value_length, const XML_Char* base, const XML_Char* system_id,
                                  const XML_Char* public_id, const XML_Char* notation_name);
  static void XMLCALL OnSkippedEntity(void* self, const XML_Char* name, int is_parameter_entity);
  static int XMLCALL OnExternalEntityRef(XML_Parser parser, const XML_Char* context, const XML_Char* base,
                                         const XML_Char* system_id, const XML_Char* public_id);

  void StartElement(const char* name, const char** attrs);
  void EndElement();
  void Text(std::string_view text);
  void StartRoot(const ExpatName& n);
  void StartRecord(const ExpatName& n);
  void StartField(const ExpatName& n, const char** attrs);
  bool ReadValueType(const char** attrs);
  void StartRangeChild(const ExpatName& n);
  void EndField(Field f);
  void EndRecord();
  bool CheckRecord();
  bool BeginField(Field f, const char* parent, std::string* text);

  // Record the first error and stop expat; later callbacks see !status_.ok() and do nothing.
  void Stop(Status status);
  void Fail(uint64_t line, uint64_t column, const std::string& what);  // 1-based position in the input
  void FailHere(const std::string& what);
  void FailAtField(Field f, const std::string& what);
  std::string Prefix(uint64_t line, uint64_t column) const;
  uint64_t Line() const;
  uint64_t Column() const;
  const char* RecordName() const;

  std::string name_;
  int64_t effective_time_ms_;
  const RecordHandler& handler_;
  XML_Parser parser_;
  Status status_;

  int depth_ = 0;                     // open structural elements (root = 1); fragment elements are not counted
  Field field_ = Field::kNone;        // the record child open at depth 3
  Field range_child_ = Field::kNone;  // the <from>/<to> open inside <range> at depth 4
  std::string* text_ = nullptr;       // where character data of the open text element goes
  bool in_value_ = false;
  int value_depth_ = 0;  // open elements inside <value>
  Pending pending_;
  std::string lower_map_;
  std::vector<NamespaceDecl> decls_;  // declarations on the element expat is about to start
  XmlFragmentWriter fragment_;
  std::unique_ptr<JsonValueCheck> json_check_;  // made by the first <value type="json">
  std::string json_why_;
  std::string json_minified_;
};

}  // namespace planb
