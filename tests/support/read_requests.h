// Typed READ requests (docs/protocol.md) as tests write them: a lookup of some keys, a query of a map.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "host/transfer/protocol.h"

namespace planb::testing {

inline protocol::ReadRequest LookupRead(const std::string& map, std::vector<std::string> keys,
                                        protocol::ReadFormat format = protocol::ReadFormat::kText) {
  protocol::ReadRequest request;
  request.kind = protocol::ReadKind::kLookup;
  request.map = map;
  request.keys = std::move(keys);
  request.format = format;
  return request;
}

inline protocol::ReadRequest QueryRead(const std::string& map, std::optional<std::string> where = std::nullopt,
                                       protocol::ReadFormat format = protocol::ReadFormat::kTable) {
  protocol::ReadRequest request;
  request.kind = protocol::ReadKind::kQuery;
  request.map = map;
  request.where = std::move(where);
  request.format = format;
  return request;
}

}  // namespace planb::testing
