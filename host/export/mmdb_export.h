// `planb export MAP --format mmdb OUT.mmdb`: a ranged map with IP address keys as a MaxMind DB file (format 2.0)
// that libmaxminddb, and so Vector, Logstash and Fluent Bit, read. Every address gets what `planb lookup` answers
// for it (range_map_answers.h); JSON values become MaxMind DB maps, arrays, strings, numbers and booleans
// (mmdb_data_encoder.h), text values strings.
//
// An `ipv4` map makes an IPv4 tree (ip_version 4). An `ip` map makes an IPv6 tree; its IPv4 addresses (stored as
// ::ffff:a.b.c.d) go under ::/96, where the format keeps IPv4, and ::ffff:0:0/96 leads to the same subtree, so
// both spellings of an IPv4 address answer alike. Such a map's rows lying wholly inside ::/96 (IPv4-compatible
// addresses, deprecated by RFC 4291) have no place in the file: the export is refused, naming one. A wider row
// covering ::/96 (a ::/0 default) keeps its answer everywhere else.
//
// The file is built in memory and written beside OUT, then renamed over it (ReplaceUserFile): a reader of OUT
// sees the old file or the whole new one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "host/storage/map_reader.h"
#include "planb/status.h"

namespace planb {

struct MmdbExportSpec {
  std::string out_path;
  std::string database_type;  // metadata database_type
  int64_t time_ms = 0;        // the instant asked about (temporal types); the build_epoch is now
  int64_t now_ms = 0;
  std::function<void(uint64_t done, uint64_t total)> progress;  // may be empty
};

struct MmdbExportSummary {
  uint64_t rows = 0;           // of the map
  uint64_t ranges = 0;         // maximal runs of addresses with one answer
  uint64_t networks = 0;       // CIDR networks in the search tree
  uint64_t records = 0;        // distinct values in the data section
  uint32_t node_count = 0;
  uint16_t ip_version = 0;
  uint64_t bytes = 0;          // of the file
  std::string content_version;
};

Status ExportMmdb(const MapReader& reader, const MmdbExportSpec& spec, MmdbExportSummary* summary);

}  // namespace planb
