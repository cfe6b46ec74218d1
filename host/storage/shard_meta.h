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
  std::string scheme;         // "hashed/2", "" for types without a key scheme
  std::string scheme_layout;  // "hash_bits=64"
  // "key_format=ip" for number-keyed types (the ranged ones), "" for the rest. Optional on disk: a shard written
  // before it was recorded has none and was written as key_format=number (FillLegacy).
  std::string type_layout;

  static ShardMeta Expected(const MapPlugins& plugins);
  Status Write(MDB_txn* txn, MDB_dbi meta) const;
  static Status Read(MDB_txn* txn, MDB_dbi meta, ShardMeta* out);
  // A meta read from a shard written before type_layout was recorded: what it was written with, as far as
  // `expected` (of the config) cares: key_format=number when the config's type has a key format.
  void FillLegacy(const ShardMeta& expected);
  // "map m, type state/1, scheme hashed/2 (hash_bits=64)"; "map geo, type ranged/2 (key_format=ip)"
  std::string Describe() const;
  // This (a config's expected meta) in the config's own terms: "type = state, scheme = hashed, hash_bits = 64"
  // (names without versions, layouts as the options that made them); `scheme_given`: the map's section names its
  // scheme (else "scheme = hashed (the default)").
  std::string ConfigTerms(bool scheme_given) const;
  // What differs from `found` (a file's meta) to this (the config's), in those terms, e.g. "the layout of scheme
  // hashed changed (version 1 to 2: the file was written by an older planb)" or "key_format changed (ip to
  // ipv4)"; several joined by "; ". *config_changed: a name or an option differs (the config changed), not only
  // a version (planb changed).
  std::string Differences(const ShardMeta& found, bool* config_changed) const;
  bool operator==(const ShardMeta& o) const {
    return format == o.format && map == o.map && type == o.type && scheme == o.scheme &&
           scheme_layout == o.scheme_layout && type_layout == o.type_layout;
  }
};

}  // namespace planb
