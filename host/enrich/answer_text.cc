#include "host/enrich/answer_text.h"

#include <charconv>
#include <cmath>

#include "host/common/iso_time.h"
#include "host/common/json_text.h"

namespace planb {

namespace {

void AppendTime(int64_t ms, std::string* out) {
  char buf[kIsoTimeBufferSize];
  out->append(buf, FormatIsoTime(ms, buf));
}

void AppendTimeString(int64_t ms, std::string* out) {
  out->push_back('"');
  AppendTime(ms, out);  // nothing in it needs escaping
  out->push_back('"');
}

template <typename T>
void AppendNumber(T value, std::string* out) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, ec == std::errc() ? static_cast<size_t>(end - buffer) : 0);
}

bool HasOwnFields(const MapInfo& info, const LookupResult& result) {
  return result.fields != nullptr && result.field_count == info.fields.size();
}

// The own fields to write: those `planb lookup` shows, else every own field.
bool Written(const MapInfo& info, const FieldInfo& field) {
  bool any_shown = false;
  for (const FieldInfo& f : info.fields) any_shown |= f.own && (f.flags & kFieldShownByLookup) != 0;
  return field.own && (!any_shown || (field.flags & kFieldShownByLookup) != 0);
}

void AppendFieldsObject(const MapInfo& info, const LookupResult& result, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (size_t i = 0; i < info.fields.size(); ++i) {
    const FieldInfo& field = info.fields[i];
    if (!Written(info, field)) continue;
    if (!first) out->push_back(',');
    first = false;
    // Lower case, as `planb lookup --format json` names them ("count"); field names are letters, digits and '_'.
    out->push_back('"');
    for (char c : field.name) out->push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    out->append("\":");
    const FieldValue& v = result.fields[i];
    switch (field.kind) {
      case FieldKind::kText: AppendJsonString(v.text.view(), out); break;
      case FieldKind::kNumber: AppendNumber(v.number, out); break;
      case FieldKind::kDate: AppendTimeString(v.number, out); break;
      case FieldKind::kDouble:
        if (std::isfinite(v.real)) AppendNumber(v.real, out);
        else out->append("null");
        break;
      case FieldKind::kBool: out->append(v.flag ? "true" : "false"); break;
      case FieldKind::kAddress:  // only an ip map's KeyStart / KeyEnd, which are never own fields (Written)
        out->append("null");
        break;
    }
  }
  out->push_back('}');
}

}  // namespace

void AppendAnswerJson(const MapInfo& info, const LookupResult& result, std::string* out) {
  if (HasOwnFields(info, result)) {
    AppendFieldsObject(info, result, out);
  } else if (info.has_session) {
    out->append("{\"start\":");
    AppendTimeString(result.session_start_ms, out);
    out->append(",\"end\":");
    AppendTimeString(result.session_end_ms, out);
    out->push_back('}');
  } else if (result.value_type == ValueType::kJson) {
    out->append(result.value.view());  // the nested object (array, number...) it was loaded as
  } else {
    AppendJsonString(result.value.view(), out);
  }
}

void AppendAnswerCell(const MapInfo& info, const LookupResult& result, std::string* out) {
  if (HasOwnFields(info, result)) {
    AppendFieldsObject(info, result, out);
  } else if (info.has_session) {
    AppendTime(result.session_start_ms, out);
    out->push_back('/');
    AppendTime(result.session_end_ms, out);
  } else {
    out->append(result.value.view());
  }
}

}  // namespace planb
