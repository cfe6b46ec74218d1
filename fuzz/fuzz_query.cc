// `--where` expressions (host/query) against the fields of each built-in store type: the first byte picks the
// type, the rest is the expression. Whatever parses must also answer Bounds, KeyPrefix and Matches (on a row of
// zeros and on a row built from the input) without a crash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "host/query/expression.h"

namespace {

std::vector<const planb::PluginDescriptor*> StoreTypes() {
  std::vector<const planb::PluginDescriptor*> types;
  for (const planb::LoadedPlugin& p : planb::fuzz::Plugins().plugins()) {
    if (p.descriptor->kind == planb::PluginKind::kStoreType) types.push_back(p.descriptor);
  }
  planb::fuzz::Check(!types.empty(), "no store type plugin loaded");
  return types;
}

}  // namespace

// Loads the plugins before the first input, so that libFuzzer sees their coverage counters from the start.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)planb::fuzz::Plugins();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<const planb::PluginDescriptor*> types = StoreTypes();
  if (size == 0) return 0;
  const planb::PluginDescriptor* type = types[data[0] % types.size()];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::unique_ptr<planb::Expression> e;
  const planb::Status s = planb::Expression::Parse(text, type->fields, type->field_count, &e);
  planb::fuzz::Check(s.ok() == (e != nullptr), "Parse's status and result disagree");
  if (!s.ok()) {
    planb::fuzz::Check(s.code() == planb::Code::kInvalidArgument && !s.message().empty(),
                       "a refused expression is not kInvalidArgument with a message");
    return 0;
  }
  (void)e->Bounds();
  (void)e->KeyPrefix();
  std::vector<planb::FieldValue> own(type->field_count);
  planb::Row row;
  row.own_fields = own.data();
  row.own_field_count = type->field_count;
  (void)e->Matches(row);
  row.key = planb::Bytes(text);
  row.value = planb::Bytes(text.substr(text.size() / 2));
  row.range_from = -static_cast<int64_t>(size);
  row.range_to = static_cast<int64_t>(size);
  row.effective_time_ms = static_cast<int64_t>(data[0]) << 40;
  row.value_type = (data[0] & 1) ? planb::ValueType::kXmlFragment : planb::ValueType::kString;
  (void)e->Matches(row);
  return 0;
}
