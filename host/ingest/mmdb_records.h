// `planb load --format mmdb`: every network of a MaxMind DB file (mmdb_networks.h) as a record of one ranged map
// with IP address keys: the network's first and last address as <from>/<to>, its record as a JSON value
// (ValueType::kJson, mmdb_json.h's typed text). An `ipv4` map takes IPv4 networks only: an IPv6 network in the
// file is an error naming it (the map wants key_format = ip). IPv4 networks of an IPv6 file load as IPv4, which
// an `ip` map stores as ::ffff:a.b.c.d: `lookup MAP 1.2.3.4` answers what `mmdblookup --ip 1.2.3.4` does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "host/xml/reference_reader.h"
#include "planb/status.h"

namespace planb {

struct MmdbLoadSpec {
  std::string map;                // lower-cased, a ranged type with key_format ipv4 or ip
  bool ipv4_only = false;         // the map's key_format is ipv4
};

// Reads `path`, handing each network to `handler` in address order. Records take `effective_time_ms` when given,
// else the file's build time (its metadata's build_epoch): a newer release of the same database is newer data.
// Errors name the file (and the network, for one the map cannot take).
Status ReadMmdbRecords(const std::string& path, const MmdbLoadSpec& spec, std::optional<int64_t> effective_time_ms,
                       const RecordHandler& handler);

}  // namespace planb
