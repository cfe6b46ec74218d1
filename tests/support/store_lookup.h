// A store's lookup of one key, as the scheme tests read it back: the value, or "(miss)".
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "host/plugin_host/map_plugins.h"
#include "planb/store.h"

namespace planb::testing {

// The map's store's Get of `key` (at `time_ms`, for temporal maps) in `table`: the value, or "(miss)" for kNotFound.
// Any other code fails the calling test, with the store's message.
inline std::string LookupOrMiss(const MapPlugins& plugins, const Table& table, std::string_view key,
                                int64_t time_ms = 0) {
  LookupKey lookup;
  lookup.key = Bytes(key);
  lookup.time_ms = time_ms;
  Row row;
  ErrorBuffer error;
  const Code code = plugins.store()->Get(table, lookup, &row, &error);
  if (code == Code::kNotFound) return "(miss)";
  EXPECT_EQ(code, Code::kOk) << error.message;
  return std::string(row.value.view());
}

}  // namespace planb::testing
