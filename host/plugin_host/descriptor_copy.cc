#include "host/plugin_host/descriptor_copy.h"

#include <cctype>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "host/common/log_text.h"

namespace planb {
namespace {

// The sizes SDK 7.0 built with: a plugin's descriptor and arrays are at least this long.
// 7.1 to 7.8 added no descriptor member; 7.9 added answers_by_containing_ranges, after destroy_scheme.
constexpr uint32_t kDescriptor70Size = offsetof(PluginDescriptor, answers_by_containing_ranges);
constexpr uint32_t kMinorAnswersByStoredKeys = 10;
constexpr uint32_t kFieldSpec70Size = offsetof(FieldSpec, flags);
constexpr uint32_t kOptionSpec70Size = sizeof(OptionSpec);
constexpr uint32_t kMaxFields = 64;
constexpr uint32_t kMaxOptions = 256;

bool IsName(const char* text) {
  if (text == nullptr || *text == '\0') return false;
  for (const char* c = text; *c != '\0'; ++c) {
    if (!std::isalnum(static_cast<unsigned char>(*c)) && *c != '_') return false;
  }
  return !std::isdigit(static_cast<unsigned char>(*text));
}

bool SameNameAnyCase(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  }
  return *a == *b;
}

bool IsKnownKind(FieldKind kind, uint32_t minor) {
  switch (kind) {
    case FieldKind::kText:
    case FieldKind::kNumber:
    case FieldKind::kDate:
      return true;
    case FieldKind::kDouble:
    case FieldKind::kBool:
      return minor >= 1;
    case FieldKind::kAddress:
      return false;  // the host's own (store.h): it gives KeyStart / KeyEnd this kind from the map's key_format
  }
  return false;
}

// Which kinds a standard Row member can be declared as (kOwn: any).
bool MemberTakes(RowField field, FieldKind kind, uint32_t minor) {
  switch (field) {
    case RowField::kKey:
    case RowField::kValueType:
    case RowField::kValue:
      return kind == FieldKind::kText;
    case RowField::kKeyStart:
    case RowField::kKeyEnd:
      return kind == FieldKind::kNumber;
    case RowField::kEffectiveTime:
    case RowField::kStart:
    case RowField::kEnd:
      return kind == FieldKind::kDate || kind == FieldKind::kNumber;
    case RowField::kOwn:
      return minor >= 1;
  }
  return false;
}

// Copies `count` elements of `stride` bytes (at least `min_size`) into host-sized structs.
template <typename T>
std::vector<T> CopyArray(const void* raw, uint32_t count, uint32_t stride) {
  std::vector<T> out(count);
  const auto* bytes = static_cast<const unsigned char*>(raw);
  const size_t n = stride < sizeof(T) ? stride : sizeof(T);
  for (uint32_t i = 0; i < count; ++i) std::memcpy(static_cast<void*>(&out[i]), bytes + size_t{i} * stride, n);
  return out;
}

}  // namespace

std::string AbiVersionText(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

Status DescriptorCopy::Copy(const PluginDescriptor* raw, const std::string& path,
                            std::unique_ptr<DescriptorCopy>* out) {
  const std::string where = "plugin " + LogValue(path);
  const std::string host = AbiVersionText(kAbiMajor, kAbiMinor);
  // Plugins of ABI 1 to 6 kept a single version in the first word, where the major is now.
  if (raw->abi_major != kAbiMajor) {
    const std::string theirs = raw->abi_major < 7 ? std::to_string(raw->abi_major)
                                                  : AbiVersionText(raw->abi_major, raw->abi_minor);
    return Status::Invalid(where + ": built against plugin SDK " + theirs + ", this planb runs SDK " + host +
                           " (major " + std::to_string(kAbiMajor) + "); rebuild it against SDK " +
                           std::to_string(kAbiMajor) + ".x");
  }
  if (raw->abi_minor > kAbiMinor) {
    return Status::Invalid(where + ": built against plugin SDK " + AbiVersionText(raw->abi_major, raw->abi_minor) +
                           ", newer than this planb's SDK " + host + "; upgrade planb or rebuild the plugin");
  }
  if (raw->size < kDescriptor70Size || raw->option_spec_size < kOptionSpec70Size ||
      raw->field_spec_size < kFieldSpec70Size || raw->size > (1u << 16) || raw->option_spec_size > (1u << 12) ||
      raw->field_spec_size > (1u << 12)) {
    return Status::Invalid(where + ": its descriptor declares impossible sizes (descriptor " +
                           std::to_string(raw->size) + ", option " + std::to_string(raw->option_spec_size) +
                           ", field " + std::to_string(raw->field_spec_size) + " bytes)");
  }
  std::unique_ptr<DescriptorCopy> copy(new DescriptorCopy());
  PluginDescriptor& d = copy->descriptor_;
  std::memcpy(static_cast<void*>(&d), raw, raw->size < sizeof d ? raw->size : sizeof d);
  d.size = sizeof d;
  // 7.10's member sits where a 7.9 descriptor had padding, whose bytes are whatever the plugin's compiler left.
  if (raw->abi_minor < kMinorAnswersByStoredKeys) d.answers_by_stored_keys = false;

  const bool store = d.kind == PluginKind::kStoreType;
  const bool scheme = d.kind == PluginKind::kKeyScheme;
  if ((!store && !scheme) || !IsName(d.name) ||
      (store && (d.create_store == nullptr || d.destroy_store == nullptr)) ||
      (scheme && (d.create_scheme == nullptr || d.destroy_scheme == nullptr)) ||
      (d.option_count > 0 && d.options == nullptr) || (d.table_count > 0 && d.tables == nullptr) ||
      (store && (d.field_count == 0 || d.fields == nullptr))) {
    return Status::Invalid(where + ": its descriptor is incomplete (kind, name of letters, digits and '_', " +
                           "create/destroy or fields)");
  }
  const std::string plugin = where + ": " + (store ? "store type '" : "scheme '") + d.name + "'";
  if (store && d.uses_key_scheme && d.key_suffix_size >= kMaxLmdbKeySize) {
    return Status::Invalid(plugin + " appends " + std::to_string(d.key_suffix_size) +
                           " bytes to each key, leaving no room for a key in LMDB's " +
                           std::to_string(kMaxLmdbKeySize) + "-byte keys");
  }
  for (uint32_t i = 0; i < d.table_count; ++i) {
    if (!IsName(d.tables[i])) return Status::Invalid(plugin + ": its table names must be letters, digits and '_'");
  }
  if (d.option_count > kMaxOptions || d.field_count > kMaxFields) {
    return Status::Invalid(plugin + " declares " + std::to_string(d.option_count) + " options and " +
                           std::to_string(d.field_count) + " fields (at most " + std::to_string(kMaxOptions) +
                           " and " + std::to_string(kMaxFields) + ")");
  }
  copy->options_ = CopyArray<OptionSpec>(d.options, d.option_count, raw->option_spec_size);
  for (uint32_t i = 0; i < d.option_count; ++i) {
    const OptionSpec& o = copy->options_[i];
    if (!IsName(o.name)) return Status::Invalid(plugin + ": its option " + std::to_string(i + 1) + " has no valid name");
    for (uint32_t j = 0; j < i; ++j) {
      if (SameNameAnyCase(o.name, copy->options_[j].name)) {
        return Status::Invalid(plugin + " declares option '" + o.name + "' twice");
      }
    }
  }
  copy->fields_ = CopyArray<FieldSpec>(d.fields, d.field_count, raw->field_spec_size);
  for (uint32_t i = 0; i < d.field_count; ++i) {
    FieldSpec& f = copy->fields_[i];
    if (raw->abi_minor < 1) f.flags = 0;  // 7.0 had no flags: what follows its fields is not ours to read
    const std::string name = f.name == nullptr ? "" : LogValue(f.name);
    if (!IsName(f.name)) {
      return Status::Invalid(plugin + ": its field " + std::to_string(i + 1) + " has no valid name ('" + name +
                             "': letters, digits and '_')");
    }
    if (!IsKnownKind(f.kind, raw->abi_minor)) {
      return Status::Invalid(plugin + ": its field '" + name + "' has unknown kind " +
                             std::to_string(static_cast<uint32_t>(f.kind)) +
                             " (kinds: text, number, date, double, bool)");
    }
    if (!MemberTakes(f.field, f.kind, raw->abi_minor)) {
      return Status::Invalid(plugin + ": its field '" + name + "' is bound to Row member " +
                             std::to_string(static_cast<uint32_t>(f.field)) + ", which is unknown or cannot hold " +
                             "its kind");
    }
    if ((f.flags & ~(kFieldShownByLookup | kFieldZeroWhenAbsent)) != 0) {
      return Status::Invalid(plugin + ": its field '" + name + "' has unknown flags " + std::to_string(f.flags));
    }
    for (uint32_t j = 0; j < i; ++j) {
      if (SameNameAnyCase(f.name, copy->fields_[j].name)) {
        return Status::Invalid(plugin + " declares field '" + name + "' twice (names are case-insensitive)");
      }
    }
  }
  d.options = copy->options_.data();
  d.option_spec_size = sizeof(OptionSpec);
  d.fields = copy->fields_.data();
  d.field_spec_size = sizeof(FieldSpec);
  *out = std::move(copy);
  return Status::Ok();
}

}  // namespace planb
