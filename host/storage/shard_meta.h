// The meta table of every map LMDB (shard, batch, snapshot): which map, store type and key scheme (with their
// versions and layout) wrote it. A file is never read or merged under another layout.
// On-disk format: table "meta", text keys and values; bump kShardFormat if it changes.
#pragma once

#include <lmdb.h>

#include <string>

#include "host/plugin_host/map_plugins.h"
#include "planb/status.h"

namespace planb {

inline constexpr const char* kShardFormat = "planb-map 1";

struct ShardMeta {
  std::string format;
  std::string map;
  std::string type;           // "state/1"
  std::string scheme;         // "hashed/1", "" for types without a key scheme
  std::string scheme_layout;  // "hash_bits=64"

  static ShardMeta Expected(const MapPlugins& plugins);
  Status Write(MDB_txn* txn, MDB_dbi meta) const;
  static Status Read(MDB_txn* txn, MDB_dbi meta, ShardMeta* out);
  // "type state/1, scheme hashed/1 (hash_bits=64)"
  std::string Describe() const;
  bool operator==(const ShardMeta& o) const {
    return format == o.format && map == o.map && type == o.type && scheme == o.scheme &&
           scheme_layout == o.scheme_layout;
  }
};

}  // namespace planb
