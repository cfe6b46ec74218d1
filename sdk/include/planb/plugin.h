// The plugin entry point. A plugin .so named libplanb_<something>.so exports one C symbol, planb_plugin (use
// PLANB_PLUGIN below), returning a pointer to a static PluginDescriptor. The host reads `abi_major` first and
// refuses the file when it differs from its own, before touching any other field; a plugin built against an
// older minor of the same major loads (docs/plugins.md "Versions" gives the rules that make that safe).
#pragma once

#include <cstdint>

#include "planb/export.h"
#include "planb/key_scheme.h"
#include "planb/status.h"
#include "planb/store.h"
#include "planb/version.h"

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
// 7.0: a growable ABI. Major and minor versions; PluginDescriptor, PluginArgs, Table, Record, LookupKey, Row,
//    ScanBounds and MaintainRequest carry their size first; the descriptor carries the element size of its
//    option and field arrays; interface calls are no longer noexcept (the host guards each one and turns an
//    escaped exception into an error naming the plugin and the call).
// 7.1: fields of a plugin's own: FieldKind kDouble / kBool, RowField::kOwn (a value in Row::own_fields),
//    FieldSpec::flags (what `planb lookup` prints).
// 7.2: IP address keys for ranged maps (option key_format, below): LookupKey::key carries the address text,
//    Row::has_addresses / address_from / address_to, ScanBounds::has_address_bounds / address_min / address_max,
//    FieldKind::kAddress (the host's own).
// 7.3: KeyScheme::PlanMerge and MergePlan: a scheme places a whole batch's keys before the store type merges
//    its rows (an id scheme resolves them in its index's order, not one random read per key).
// 7.4: KeyScheme::PlanValues and ValuePlan: a scheme places a whole batch's stored values before the store type
//    merges its rows (value_dedup joins the value tables in their order and writes each count once).
// 7.5: KeyScheme::MatchStoredKey and StoresValuesAsGiven: a lookup learns the stored key's size from the call
//    that proves the row the key's, and skips DecodeValue where values are stored as they are.
// 7.6: KeyScheme::LookupForm and KeyForm (planb/key_form.h): lookups on the built-in hashed and direct forms
//    compute the first candidate and check the stored key without calling the scheme.
// 7.7: KeyFormKind::kHybrid and kVariable: lookups on the built-in hybrid scheme's two forms (direct and hashed,
//    told apart by a tag byte), and on the variable scheme's direct and hashed ones, make no scheme calls either.
//    A 7.6 host does not know the kinds and calls the scheme.
// 7.8: ValueType::kJson (planb/value_type.h): JSON values, stored and answered as their text. The host writes
//    them only into maps whose store type was built against 7.8 or later.
// 7.9: PluginDescriptor::answers_by_containing_ranges: a promise that lets a reader answer a ranged map from a
//    read index of its answers (docs/performance.md) instead of calling Get for every lookup.
// 7.10: PluginDescriptor::answers_by_stored_keys: the same for text-keyed maps, answered from a hash table of
//    their rows.
// 7.11: nothing new in the ABI. planb/version.h (PLANB_SDK_VERSION_MAJOR / _MINOR / _AT_LEAST) for the
//    preprocessor; the CMake package's version is the SDK's (find_package(PlanB 7.11)); errors a plugin returns
//    are worded by the host with the plugin and the call, as thrown ones are; planb_add_conformance_test UNORDERED.
// A minor version only adds: members at the end of a sized struct, enumerators, flags, and virtual methods after
// the last one of an interface (the host calls them only on plugins whose minor has them). Anything else is
// a new major. The numbers live in planb/version.h (PLANB_SDK_VERSION_MAJOR / _MINOR) for the preprocessor.
inline constexpr uint32_t kAbiMajor = PLANB_SDK_VERSION_MAJOR;
inline constexpr uint32_t kAbiMinor = PLANB_SDK_VERSION_MINOR;
inline constexpr const char* kPluginSymbol = "planb_plugin";

enum class PluginKind : uint32_t { kStoreType = 1, kKeyScheme = 2 };

// What the KEY of a lookup is for a store type: text (through a key scheme) or a signed 64-bit number.
// A kNumber type may declare the option `key_format` (7.2), the one option the host itself reads (host/config
// MapKeyFormat): "number" (the default), "ipv4" or "ip". Under ipv4 and ip the host passes lookup keys as text
// in LookupKey::key, prints KeyStart / KeyEnd from Row::address_from / address_to and compares them as
// addresses (FieldKind::kAddress, ScanBounds address bounds).
enum class LookupKeyKind : uint32_t { kText = 1, kNumber = 2 };
inline constexpr const char* kKeyFormatOption = "key_format";

// An option a plugin accepts in its map's config section, e.g. hash_bits for the hashed scheme. The host hands
// every declared option to `create`: the config's value, else `default_value` (an option with neither is left
// out). `planb plugins` shows the three. Arrays of these grow by PluginDescriptor::option_spec_size.
struct OptionSpec {
  const char* name;
  const char* default_value;  // as the user would write it; null when there is none
  const char* help;           // one line for `planb plugins`
};

struct PluginOption {
  const char* name;
  const char* value;
};

// What the host hands to `create`. Views are valid only during the call.
struct PluginArgs {
  uint32_t size = sizeof(PluginArgs);
  const char* map_name = nullptr;
  const PluginOption* options = nullptr;  // the options this plugin declared: set in config or defaulted
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
  uint32_t abi_major = kAbiMajor;  // must be first: the host checks it before anything else
  uint32_t abi_minor = kAbiMinor;
  uint32_t size = sizeof(PluginDescriptor);      // the host reads no member past it
  uint32_t option_spec_size = sizeof(OptionSpec);  // the stride of `options`
  uint32_t field_spec_size = sizeof(FieldSpec);    // the stride of `fields`
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
  Store* (*create_store)(const PluginArgs* args, ErrorBuffer* error) = nullptr;
  void (*destroy_store)(Store* store) = nullptr;
  KeyScheme* (*create_scheme)(const PluginArgs* args, ErrorBuffer* error) = nullptr;
  void (*destroy_scheme)(KeyScheme* scheme) = nullptr;
  // 7.9, number-keyed store types without lookup time: true promises that Get's answer (value type and value)
  // for a number x depends only on which stored rows' [KeyStart, KeyEnd] contain x, and that the type has no
  // fields of its own. Numbers with the same containing rows then have the same answer, so a reader may look up
  // each range boundary once, after any change of the map, and answer every number from that table (the
  // Reader's read index). Ranged State promises it; a type whose answer depends on x itself must not.
  bool answers_by_containing_ranges = false;
  // 7.10, text-keyed store types without lookup time: true promises that a scan of the whole map (DecodeRow of
  // every row of the data table) yields at most one row per key; that Get finds a key exactly when the scan
  // yields a row whose Row::key is that key, byte for byte, and then answers that row's value type and value;
  // and that the type has no fields of its own and no sessions. A reader may then read the rows once, after any
  // change of the map, and answer every key from a hash table of them (the Reader's read index). State
  // promises it; a type that folds case, combines several rows into one answer or answers keys it does not
  // store must not. The host reads it only from plugins built against 7.10 or later.
  bool answers_by_stored_keys = false;
};

using PluginEntryPoint = const PluginDescriptor*();

}  // namespace planb

// Exports `descriptor` (a static PluginDescriptor) as the plugin's entry point, loadable through Boost.DLL.
#define PLANB_PLUGIN(descriptor)                                                       \
  extern "C" PLANB_EXPORT const ::planb::PluginDescriptor* planb_plugin() noexcept { \
    return &(descriptor);                                                              \
  }
