// Helpers for store types whose rows are keyed through a KeyScheme: what State, Temporal State and Session
// share. Header-only conveniences over the SDK interfaces; using them is optional and changes no ABI.
// Finding rows: keyed_search.h (FindKeyedRow, ResolveKey). Writing them: keyed_writer.h (KeyedRowWriter).
//
//   LMDB key   = prefix + suffix (the store type's fixed-size part)
//   LMDB value = stored key + head (the store type's fixed part, e.g. a type byte) + stored value
#pragma once

#include <new>

#include "planb/key_scheme.h"
#include "planb/keyed_search.h"
#include "planb/keyed_writer.h"
#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/table.h"

namespace planb {

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
