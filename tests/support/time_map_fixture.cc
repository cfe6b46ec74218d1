#include "support/time_map_fixture.h"

#include <set>

#include "host/common/iso_time.h"
#include "host/storage/own_fields.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"

namespace planb::testing {
namespace {

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

constexpr const char* kXmlHead =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<referenceData xmlns=\"reference-data:2\">\n";
constexpr const char* kXmlTail = "</referenceData>\n";

template <typename Event>
Status PutAll(const std::shared_ptr<MapEnv>& env, const std::vector<Event>& events) {
  MapTxn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env, true));
  for (const Event& event : events) {
    ErrorBuffer error;
    Code code = env->plugins().store()->Put(txn.table(), ToRecord(event), &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
  }
  return txn.Commit();
}

Answer MakeAnswer(Code code, const Row& row, const ErrorBuffer& error) {
  Answer answer;
  answer.code = code;
  if (code == Code::kOk) {
    answer.key = std::string(row.key.view());
    answer.effective_time_ms = row.effective_time_ms;
    answer.start_ms = row.session_start_ms;
    answer.end_ms = row.session_end_ms;
    answer.type = row.value_type;
    answer.value = std::string(row.value.view());
  } else if (code != Code::kNotFound) {
    answer.error = error.message;
  }
  return answer;
}

}  // namespace

Record ToRecord(const TemporalEvent& event, int64_t effective_time_ms) {
  Record record;
  record.kind = RecordKind::kReference;
  record.has_key = true;
  record.key = Bytes(event.key);
  record.time_given = event.time_ms.has_value();
  record.time_ms = event.time_ms.value_or(effective_time_ms);
  record.has_value = true;
  record.value_type = event.type;
  record.value = Bytes(event.value);
  return record;
}

Record ToRecord(const SessionEvent& event) {
  Record record;
  record.kind = RecordKind::kSession;
  record.has_key = true;
  record.key = Bytes(event.key);
  record.time_given = true;
  record.time_ms = event.time_ms;
  record.has_timeout = event.timeout_ms.has_value();
  record.timeout_ms = event.timeout_ms.value_or(0);
  return record;
}

Status PutEvents(const std::shared_ptr<MapEnv>& env, const std::vector<TemporalEvent>& events) {
  return PutAll(env, events);
}

Status PutEvents(const std::shared_ptr<MapEnv>& env, const std::vector<SessionEvent>& events) {
  return PutAll(env, events);
}

void PrintTo(const Answer& answer, std::ostream* os) {
  *os << "{" << CodeName(answer.code);
  if (answer.code == Code::kOk) {
    *os << ", key '" << answer.key << "', effective " << answer.effective_time_ms << ", session [" << answer.start_ms
        << ", " << answer.end_ms << "], type " << static_cast<int>(answer.type) << ", value '" << answer.value << "'";
  }
  if (!answer.error.empty()) *os << ": " << answer.error;
  *os << "}";
}

Answer LookupAt(const MapEnv& env, std::string_view key, int64_t time_ms) {
  Txn txn;
  Cursor cursor;
  Status s = txn.Begin(env.env(), MDB_RDONLY);
  if (s.ok()) s = cursor.Open(txn.get(), env.data());
  if (!s.ok()) {
    Answer answer;
    answer.code = s.code();
    answer.error = s.message();
    return answer;
  }
  LookupKey lookup;
  lookup.key = Bytes(key);
  lookup.time_ms = time_ms;
  Row row;
  OwnFieldValues own(env.plugins().type_descriptor());
  own.Attach(&row);
  ErrorBuffer error;
  const Code code = env.plugins().store()->Get(env.MakeTable(txn.get(), cursor.get()), lookup, &row, &error);
  return MakeAnswer(code, row, error);
}

Answer LookupAt(const MapReader& reader, std::string_view key, int64_t time_ms) {
  LookupKey lookup;
  lookup.key = Bytes(key);
  lookup.time_ms = time_ms;
  Row row;
  ErrorBuffer error;
  const Code code = reader.Lookup(lookup, &row, &error);
  return MakeAnswer(code, row, error);
}

void PrintTo(const FullRow& row, std::ostream* os) {
  *os << "{key '" << row.key << "', effective " << row.effective_time_ms << ", session [" << row.start_ms << ", "
      << row.end_ms << "], type " << static_cast<int>(row.type) << ", value '" << row.value << "', lmdb key of "
      << row.lmdb_key.size() << " bytes}";
}

Status DumpFullRows(const MapEnv& env, std::vector<FullRow>* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), cursor.get());
  Cursor walk;
  PLANB_RETURN_IF_ERROR(walk.Open(txn.get(), env.data()));
  Bytes key;
  Bytes value;
  OwnFieldValues own(env.plugins().type_descriptor());
  for (bool more = walk.Get(MDB_FIRST, &key, &value); more; more = walk.Get(MDB_NEXT, &key, &value)) {
    Row row;
    own.Attach(&row);
    ErrorBuffer error;
    Code code = env.plugins().store()->DecodeRow(table, key, value, &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
    out->push_back(FullRow{std::string(key.view()), std::string(row.key.view()), row.effective_time_ms,
                           row.session_start_ms, row.session_end_ms, row.value_type, std::string(row.value.view())});
  }
  return Status::Ok();
}

std::string MapSection(const std::string& name, const std::string& type, const std::string& scheme,
                       const std::string& extra) {
  return "[map." + name + "]\ntype = " + type + "\nscheme = " + scheme + "\nmax_store_size = 1GiB\n" + extra;
}

std::string TemporalXml(const std::string& map, const std::vector<TemporalEvent>& events) {
  std::string xml = kXmlHead;
  for (const TemporalEvent& event : events) {
    xml += "<reference><map>" + map + "</map>";
    if (event.time_ms) xml += "<time>" + FormatIsoTime(*event.time_ms) + "</time>";
    xml += "<key>" + Escape(event.key) + "</key><value>" + Escape(event.value) + "</value></reference>\n";
  }
  return xml + kXmlTail;
}

std::string SessionXml(const std::string& map, const std::vector<SessionEvent>& events) {
  std::string xml = kXmlHead;
  for (const SessionEvent& event : events) {
    xml += "<session><map>" + map + "</map><key>" + Escape(event.key) + "</key><time>" + FormatIsoTime(event.time_ms) +
           "</time>";
    if (event.timeout_ms) xml += "<timeout>" + std::to_string(*event.timeout_ms) + "ms</timeout>";
    xml += "</session>\n";
  }
  return xml + kXmlTail;
}

std::string RandomInput::Text(size_t min_size, size_t max_size) {
  static const char* const kPieces[] = {
      "a", "b", "Z", "0", "7", " ", "-", "&", "<", ">", "\"", "\xC3\xA9", "\xE2\x82\xAC", "_", "q", "x"};
  const size_t size = static_cast<size_t>(Between(static_cast<int64_t>(min_size), static_cast<int64_t>(max_size)));
  std::string text;
  while (text.size() < size) text += kPieces[Index(sizeof(kPieces) / sizeof(kPieces[0]))];
  return text;
}

std::vector<std::string> RandomInput::DistinctTexts(size_t count, size_t min_size, size_t max_size) {
  std::set<std::string> seen;
  std::vector<std::string> texts;
  while (texts.size() < count) {
    std::string text = Text(min_size, max_size);
    if (seen.insert(text).second) texts.push_back(std::move(text));
  }
  return texts;
}

int64_t RandomInput::Between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(random_); }

}  // namespace planb::testing
