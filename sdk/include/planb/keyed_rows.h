// Helpers for store types whose rows are keyed through a KeyScheme: what State, Temporal State and Session
// share. Header-only conveniences over the SDK interfaces; using them is optional and changes no ABI.
// Finding rows: keyed_search.h (FindKeyedRow, ResolveKey). Writing them: keyed_writer.h (KeyedRowWriter).
// Decoding a value behind a type byte, deleting a row, creating the store: below.
//
//   LMDB key   = prefix + suffix (the store type's fixed-size part)
//   LMDB value = stored key + head (the store type's fixed part, e.g. a type byte) + stored value
//
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <new>

#include "planb/key_scheme.h"
#include "planb/keyed_search.h"
#include "planb/keyed_writer.h"
#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/table.h"
#include "planb/value_type.h"

namespace planb {

// Deletes the keyed row `table.cursor` is on (`lmdb_key`, `value`): releases its stored value (what follows the
// stored key and `head_size` bytes; rows without values, `has_value` false, hold none), then mdb_cursor_del.
// `row_kind` names the row in messages ("State row").
inline Code DeleteKeyedRow(const Table& table, const KeyScheme& scheme, Bytes lmdb_key, Bytes value,
                           uint32_t head_size, bool has_value, const char* row_kind, ErrorBuffer* error) {
  if (has_value) {
    Bytes key;
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme.DecodeRow(table, lmdb_key, value, &key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    if (value.size < uint64_t{stored_key_size} + head_size) {  // 64 bits: no wrap round
      return Fail(error, Code::kCorruption, "%s value of %zu bytes is shorter than its stored key and head",
                  row_kind, value.size);
    }
    const uint32_t skip = stored_key_size + head_size;
    code = scheme.ReleaseValue(table, Bytes(value.data + skip, value.size - skip), error);
    if (code != Code::kOk) return code;
  }
  const int rc = mdb_cursor_del(table.cursor, 0);
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "deleting a %s: %s", row_kind, mdb_strerror(rc));
  return Code::kOk;
}

// The value of a keyed row whose head is one value type byte (State, Temporal State): `value` is the row's LMDB
// value, `stored_key_size` the scheme's part at its start. Fills row->value_type and row->value, the stored value
// through the scheme's DecodeValue unless `values_as_given` (the scheme's StoresValuesAsGiven, asked once: then
// the stored bytes are the value). kCorruption, naming `row_kind` ("State row"), when the type byte is missing or
// unknown.
// Since SDK 7.5.
inline Code DecodeTypedValue(const KeyScheme& scheme, bool values_as_given, const Table& table, Bytes value,
                             uint32_t stored_key_size, const char* row_kind, Row* row, ErrorBuffer* error) {
  if (value.size < uint64_t{stored_key_size} + 1 || !IsKnownValueType(value.data[stored_key_size])) {
    return Fail(error, Code::kCorruption, "%s value of %zu bytes has no valid value type", row_kind, value.size);
  }
  row->value_type = static_cast<ValueType>(value.data[stored_key_size]);
  const Bytes stored(value.data + stored_key_size + 1, value.size - stored_key_size - 1);
  if (values_as_given) {  // no value table: DecodeValue would hand `stored` back
    row->value = stored;
    return Code::kOk;
  }
  return scheme.DecodeValue(table, stored, &row->value, error);
}

// A PluginDescriptor::create_store for a store type `T(const KeyScheme*)` that needs the map's key scheme.
template <typename T>
Store* CreateKeyedStore(const PluginArgs* args, ErrorBuffer* error, const char* type_name) noexcept {
  if (args->scheme == nullptr) {
    Fail(error, Code::kInvalidArgument, "the %s store needs a key scheme", type_name);
    return nullptr;
  }
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new T(args->scheme);
    return Code::kOk;
  });
  return store;
}

}  // namespace planb
