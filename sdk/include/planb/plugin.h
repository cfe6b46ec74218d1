// The plugin entry point. A plugin .so exports one C symbol, planb_plugin (use PLANB_PLUGIN below), returning a
// pointer to a static PluginDescriptor. The host reads `abi_version` first and refuses the file on a mismatch,
// before touching any other field. Any change to the SDK's interfaces or structs bumps kAbiVersion.
#pragma once

#include <cstdint>

#include "planb/export.h"
#include "planb/key_scheme.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

// 2: row fields, lookup kinds, ScanRange, own tables.
// 3: KeyScheme finds rows by candidates (FirstCandidate / RowHasKey / NextCandidate / NewPrefix) instead of
//    Resolve, so that a lookup is one descent of the store type's cursor and a merge one cursor pass; stored
//    keys take a KeyPrefix; EncodeValue / DecodeValue / ReleaseValue leave room for value deduplication.
// 4: KeyScheme::TablesInUse: an instance opens only the tables its options need (value_dedup's tables exist
//    only in shards written with it, so shards written before a scheme declared them still open).
// 5: Table::memo, a per-snapshot scratch for store types (the Session store's longest session).
// 6: maintenance: Store::Maintain / DeleteRow / FinishDeletes, KeyScheme::SweepUnusedKeys and
//    PluginDescriptor::maintenance (condensation, retention and deletion batches).
inline constexpr uint32_t kAbiVersion = 6;
inline constexpr const char* kPluginSymbol = "planb_plugin";

enum class PluginKind : uint32_t { kStoreType = 1, kKeyScheme = 2 };

// What the KEY of a lookup is for a store type: text (through a key scheme) or a signed 64-bit number.
enum class LookupKeyKind : uint32_t { kText = 1, kNumber = 2 };

// An option a plugin accepts in its map's config section, e.g. hash_bits for the hashed scheme.
struct OptionSpec {
  const char* name;
  const char* default_value;  // as the user would write it; null when there is none
  const char* help;
};

struct PluginOption {
  const char* name;
  const char* value;
};

// What the host hands to `create`. Views are valid only during the call.
struct PluginArgs {
  const char* map_name = nullptr;
  const PluginOption* options = nullptr;  // only the options this plugin declared
  uint32_t option_count = 0;
  // Key schemes: bytes the store type appends after the prefix (a self-delimiting prefix is needed if > 0).
  uint32_t key_suffix_size = 0;
  // Store types that take a text key: the map's scheme (outlives the store).
  const KeyScheme* scheme = nullptr;
};

inline const char* FindOption(const PluginArgs& args, const char* name) {
  for (uint32_t i = 0; i < args.option_count; ++i) {
    const char* a = args.options[i].name;
    const char* b = name;
    while (*a != '\0' && *a == *b) ++a, ++b;
    if (*a == *b) return args.options[i].value;
  }
  return nullptr;
}

// Fill it field by field (every field has a default), e.g.
//   const PluginDescriptor kDescriptor = [] { PluginDescriptor d; d.kind = ...; return d; }();
struct PluginDescriptor {
  uint32_t abi_version = kAbiVersion;  // must be first: the host checks it before anything else
  PluginKind kind = PluginKind::kStoreType;
  const char* name = nullptr;     // unique per kind: the `type =` or `scheme =` value in config
  uint32_t version = 0;           // version of the on-disk layout it writes; recorded in every shard
  const char* summary = nullptr;  // one line for `planb plugins`
  const OptionSpec* options = nullptr;
  uint32_t option_count = 0;
  // Extra LMDB tables the plugin keeps beside the data table (e.g. a lookup table); the host creates and opens
  // them in every map environment and passes their handles in Table. Names: letters, digits, '_'. A key scheme
  // instance uses the first KeyScheme::TablesInUse() of its tables; only those are created and opened.
  const char* const* tables = nullptr;
  uint32_t table_count = 0;
  // Store types only.
  bool uses_key_scheme = false;        // takes a text key through a KeyScheme
  uint32_t key_suffix_size = 0;        // bytes appended after the scheme prefix in each LMDB key
  unsigned data_table_flags = 0;       // extra mdb_dbi_open flags for the data table (e.g. MDB_DUPSORT)
  LookupKeyKind lookup_key = LookupKeyKind::kText;  // what a lookup's KEY is: text or a number
  bool lookup_uses_time = false;       // lookups are "at a time" (LookupKey::time_ms)
  uint32_t maintenance = 0;            // kMaintainRetain | kMaintainCondense (store.h): what Maintain does
  const FieldSpec* fields = nullptr;   // the row fields queries see, in display order
  uint32_t field_count = 0;
  // Exactly one pair is set, matching `kind`. create returns null and fills `error` on failure.
  Store* (*create_store)(const PluginArgs* args, ErrorBuffer* error) noexcept = nullptr;
  void (*destroy_store)(Store* store) noexcept = nullptr;
  KeyScheme* (*create_scheme)(const PluginArgs* args, ErrorBuffer* error) noexcept = nullptr;
  void (*destroy_scheme)(KeyScheme* scheme) noexcept = nullptr;
};

using PluginEntryPoint = const PluginDescriptor*();

}  // namespace planb

// Exports `descriptor` (a static PluginDescriptor) as the plugin's entry point, loadable through Boost.DLL.
#define PLANB_PLUGIN(descriptor)                                                       \
  extern "C" PLANB_EXPORT const ::planb::PluginDescriptor* planb_plugin() noexcept { \
    return &(descriptor);                                                              \
  }
