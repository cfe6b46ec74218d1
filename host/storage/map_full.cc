#include "host/storage/map_full.h"

namespace planb {

bool IsMapFull(const Status& s) {
  return s.code() == Code::kFull && s.message().find("MDB_MAP_FULL") != std::string::npos;
}

std::string ByteSizeText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  for (int i = 0; i < 4; ++i) {
    const uint64_t unit = uint64_t{1} << (10 * (4 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + kUnits[i];
  }
  return std::to_string(bytes) + " bytes";
}

Status DescribeMapFull(const Status& s, const MapConfig& map, const std::string& what, const std::string& file) {
  if (!IsMapFull(s)) return s;
  return Status(Code::kFull, "map " + map.name + ": " + what + " " + file + " is full: it reached max_store_size = " +
                                 ByteSizeText(map.max_store_size) + " (" + std::to_string(map.max_store_size) +
                                 " bytes, the LMDB map size of the map's files) in this node's config; raise "
                                 "max_store_size in [map." + map.name + "] (LMDB: " + s.message() + ")");
}

}  // namespace planb
