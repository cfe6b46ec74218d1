#include "host/export/mmdb_search_tree.h"

namespace planb {

MmdbSearchTree::MmdbSearchTree(uint32_t bits) : bits_(bits), nodes_(2, kEmpty) {}

uint32_t MmdbSearchTree::Bit(unsigned __int128 address, uint32_t depth) const {
  return static_cast<uint32_t>((address >> (bits_ - 1 - depth)) & 1);
}

MmdbSearchTree::Record* MmdbSearchTree::Slot(unsigned __int128 address, uint32_t prefix_len) {
  uint64_t node = 0;
  for (uint32_t depth = 0;; ++depth) {
    const size_t slot = 2 * node + Bit(address, depth);
    if (depth + 1 == prefix_len) return &nodes_[slot];
    const Record r = nodes_[slot];
    if ((r & kDataTag) != 0) return nullptr;
    if (r == kEmpty) {
      node = nodes_.size() / 2;
      nodes_[slot] = kNodeTag | node;  // before the resize: `slot` indexes the vector as it is now
      nodes_.resize(nodes_.size() + 2, kEmpty);
    } else {
      node = r & kPayload;
    }
  }
}

Status MmdbSearchTree::Insert(unsigned __int128 address, uint32_t prefix_len, uint32_t data) {
  if (prefix_len == 0 || prefix_len > bits_) {
    return Status::Invalid("a network's prefix length " + std::to_string(prefix_len) + " is outside 1.." +
                           std::to_string(bits_));
  }
  Record* slot = Slot(address, prefix_len);
  if (slot == nullptr || *slot != kEmpty) return Status::Invalid("a network overlaps one written before");
  *slot = kDataTag | data;
  return Status::Ok();
}

Status MmdbSearchTree::Alias(unsigned __int128 alias, unsigned __int128 target, uint32_t prefix_len) {
  Record reached = kEmpty;
  uint64_t node = 0;
  for (uint32_t depth = 0; depth < prefix_len; ++depth) {
    reached = nodes_[2 * node + Bit(target, depth)];
    if ((reached & kNodeTag) == 0) break;  // data or nothing above the target's depth covers it all
    node = reached & kPayload;
  }
  if (reached == kEmpty) return Status::Ok();
  Record* slot = Slot(alias, prefix_len);
  if (slot == nullptr || *slot != kEmpty) return Status::Invalid("a network lies inside an alias's network");
  *slot = reached;
  return Status::Ok();
}

void MmdbSearchTree::Write(uint32_t record_size, const std::vector<uint32_t>& data_offsets, std::string* out) const {
  const uint64_t count = node_count();
  const auto value_of = [&](Record r) -> uint32_t {
    if (r == kEmpty) return static_cast<uint32_t>(count);
    if ((r & kNodeTag) != 0) return static_cast<uint32_t>(r & kPayload);
    return static_cast<uint32_t>(count + 16 + data_offsets[r & kPayload]);
  };
  out->reserve(out->size() + count * record_size / 4);
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t left = value_of(nodes_[2 * i]);
    const uint32_t right = value_of(nodes_[2 * i + 1]);
    const auto put = [out](uint32_t v, int bytes) {
      for (int b = bytes - 1; b >= 0; --b) out->push_back(static_cast<char>(static_cast<uint8_t>(v >> (8 * b))));
    };
    if (record_size == 24) {
      put(left, 3);
      put(right, 3);
    } else if (record_size == 28) {
      // The middle byte holds the top 4 bits of each record: left's high nibble, right's low nibble.
      put(left & 0xFFFFFF, 3);
      out->push_back(static_cast<char>(static_cast<uint8_t>(((left >> 20) & 0xF0) | ((right >> 24) & 0x0F))));
      put(right & 0xFFFFFF, 3);
    } else {
      put(left, 4);
      put(right, 4);
    }
  }
}

}  // namespace planb
