// A whole MaxMind DB file (format 2.0): search tree, the 16-byte separator, data section, then the metadata
// marker and map. The record size is the smallest of 24, 28 and 32 bits that holds every record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/export/mmdb_search_tree.h"
#include "planb/status.h"

namespace planb {

struct MmdbMetadata {
  uint16_t ip_version = 6;      // 4: a 32-bit tree; 6: 128 bits
  std::string database_type;    // what readers check (Logstash and Vector's geoip know MaxMind's names)
  std::string description;      // in English
  uint64_t build_epoch = 0;     // seconds since 1970
};

// `data`: the data section, entry i at data_offsets[i]. kInvalidArgument when the file would exceed what 32-bit
// records address.
Status AssembleMmdb(const MmdbSearchTree& tree, const std::string& data, const std::vector<uint32_t>& data_offsets,
                    const MmdbMetadata& metadata, std::string* out);

}  // namespace planb
