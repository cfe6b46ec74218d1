// Every network of a MaxMind DB (.mmdb) file with its record, read through libmaxminddb (the file's format is
// never parsed here), for `planb load --format mmdb`.
//
// IPv4 in IPv6 files: the spec stores IPv4 addresses under ::/96 and lets writers point other subtrees
// (::ffff:0:0/96, 2001::/32, 2002::/16 in MaxMind's writer) at that same node. Networks under ::/96 are yielded
// once, as IPv4; a record elsewhere that points to the IPv4 start node is such an alias and is skipped; every
// other network is yielded as IPv6. Networks come in address order (a depth-first walk, left before right).
//
// Errors name the file: a file that does not open or is not an .mmdb (libmaxminddb's message), a search tree that
// points outside the file, is deeper than the address or visits more nodes than node_count (a cycle), a record
// that does not decode, and any MmdbLimits exceeded. Nothing here crashes or loops on a malformed file.
//
// Thread-safety: an MmdbFile is read-only after Open; ForEachNetwork may run on several threads at once.
#pragma once

#include <maxminddb.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/mmdb_json.h"
#include "planb/status.h"

namespace planb {

struct MmdbLimits {
  MmdbJsonLimits record;             // nesting depth (32) and JSON bytes (1 MiB) of one record
  uint64_t max_networks = 50000000;  // networks yielded by one walk (GeoLite2-City has about 5M)
};

struct MmdbNetwork {
  bool ipv6 = false;                // false: an IPv4 network, 4 bytes of first/last used
  std::array<uint8_t, 16> first{};  // network address, network byte order
  std::array<uint8_t, 16> last{};   // its last address
  uint8_t prefix_len = 0;           // 0..32 (IPv4), 0..128 (IPv6)
  std::string record_json;          // mmdb_json.h
};

class MmdbFile {
 public:
  // Opens `path` (memory-mapped) and checks its metadata. Missing file, directory: kIOError; not an .mmdb,
  // corrupt: kCorruption.
  static Status Open(const std::string& path, MmdbLimits limits, std::unique_ptr<MmdbFile>* out);

  ~MmdbFile();
  MmdbFile(const MmdbFile&) = delete;
  MmdbFile& operator=(const MmdbFile&) = delete;

  const std::string& path() const { return path_; }
  int ip_version() const { return mmdb_.metadata.ip_version; }  // 4 or 6
  std::string database_type() const;
  uint32_t node_count() const { return mmdb_.metadata.node_count; }
  uint16_t record_size() const { return mmdb_.metadata.record_size; }  // bits
  uint64_t build_epoch() const { return mmdb_.metadata.build_epoch; }  // seconds since 1970
  std::vector<std::string> languages() const;

  // Calls `visit` once per data record, in address order. A non-OK Status from `visit` stops the walk and is
  // returned as it is. The network passed is valid only during the call.
  Status ForEachNetwork(const std::function<Status(const MmdbNetwork&)>& visit) const;

 private:
  MmdbFile(std::string path, MmdbLimits limits) : path_(std::move(path)), limits_(limits) {}

  // The node reached from the root by 96 zero bits (::/96) in an IPv6 tree, or false when the walk ends earlier
  // (an IPv4 tree, or no IPv4 subtree).
  Status FindIpv4StartNode(bool* found, uint32_t* node) const;
  Status Yield(const uint8_t* bits, uint32_t prefix_len, MMDB_entry_s entry,
               const std::function<Status(const MmdbNetwork&)>& visit, MmdbNetwork* network) const;
  Status Error(const std::string& what, int mmdb_status) const;

  std::string path_;
  MmdbLimits limits_;
  MMDB_s mmdb_{};
  bool open_ = false;  // MMDB_close only after a successful MMDB_open
};

}  // namespace planb
