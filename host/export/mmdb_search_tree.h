// The search tree of a MaxMind DB file (MaxMind DB File Format 2.0, "Search Tree Section"), built from disjoint
// networks: a binary trie over the address bits, most significant first, whose records are another node, "no
// data" or a data section entry. Node 0 is the root; nodes are numbered as they are made.
// Not thread-safe; allocates (an export, never a lookup path).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planb/status.h"

namespace planb {

class MmdbSearchTree {
 public:
  // `bits`: 32 for an IPv4 tree, 128 for IPv6.
  explicit MmdbSearchTree(uint32_t bits);

  // The network `address`/`prefix_len` (address in the low `bits` bits; 1 <= prefix_len <= bits) holds data
  // entry `data`. kInvalidArgument when it overlaps a network inserted before.
  Status Insert(unsigned __int128 address, uint32_t prefix_len, uint32_t data);

  // Makes `alias`/`prefix_len` lead where `target`/`prefix_len` leads (a shared subtree, as MaxMind's writer points
  // ::ffff:0:0/96 at the IPv4 space under ::/96). Nothing happens when the target holds nothing. kInvalidArgument
  // when networks were inserted inside the alias.
  Status Alias(unsigned __int128 alias, unsigned __int128 target, uint32_t prefix_len);

  uint32_t node_count() const { return static_cast<uint32_t>(nodes_.size() / 2); }

  // The tree's bytes at `record_size` bits per record (24, 28 or 32), data entry i at data section offset
  // data_offsets[i]. REQUIRES: every record value (node_count + 16 + the largest offset) fits `record_size`.
  void Write(uint32_t record_size, const std::vector<uint32_t>& data_offsets, std::string* out) const;

 private:
  // A record while building: the top two bits say what it is.
  using Record = uint64_t;
  static constexpr Record kEmpty = 0;
  static constexpr Record kNodeTag = uint64_t{1} << 62;
  static constexpr Record kDataTag = uint64_t{2} << 62;
  static constexpr Record kPayload = (uint64_t{1} << 62) - 1;

  uint32_t Bit(unsigned __int128 address, uint32_t depth) const;
  // The record slot `address` reaches at depth prefix_len - 1 (made on the way; nullptr when data is met first).
  Record* Slot(unsigned __int128 address, uint32_t prefix_len);

  uint32_t bits_;
  std::vector<Record> nodes_;  // left, right of node i at 2i, 2i + 1
};

}  // namespace planb
