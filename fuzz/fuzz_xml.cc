// Reference-data XML (host/xml): any bytes must be read without a crash, and since the parser takes a document
// in any pieces, reading it whole and in two pieces (split where the first byte and the size say) must agree
// exactly. The whole input is the document, so sample files are seeds as they are.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "host/xml/reference_parser.h"
#include "host/xml/reference_reader.h"

namespace {

// What a read yields, summed up so two reads can be compared.
struct Outcome {
  planb::Status status;
  std::string records;
};

planb::Status Collect(const planb::ParsedRecord& r, std::string* out) {
  out->append(r.map).append("|").append(std::to_string(r.line)).append(":").append(std::to_string(r.column));
  out->append("|").append(r.record.key.view());
  out->append("|").append(r.record.value.view()).append("\n");
  return planb::Status();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t split = (data[0] * size_t{257} + size) % (size + 1);
  const std::string_view xml(reinterpret_cast<const char*>(data), size);

  Outcome whole;
  const planb::RecordHandler whole_handler = [&](const planb::ParsedRecord& r) { return Collect(r, &whole.records); };
  whole.status = planb::ReadReferenceData("fuzz.xml", xml, 0, whole_handler);

  Outcome pieces;
  const planb::RecordHandler pieces_handler = [&](const planb::ParsedRecord& r) { return Collect(r, &pieces.records); };
  {
    planb::ReferenceParser parser("fuzz.xml", 0, pieces_handler);
    const size_t first = split;
    pieces.status = parser.Feed(xml.data(), first, false);
    if (pieces.status.ok()) pieces.status = parser.Feed(xml.data() + first, xml.size() - first, true);
  }
  planb::fuzz::Check(whole.status.ok() == pieces.status.ok(), "whole and split reads disagree on success");
  planb::fuzz::Check(whole.records == pieces.records, "whole and split reads yield different records");
  return 0;
}
