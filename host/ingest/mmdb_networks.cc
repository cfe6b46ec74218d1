// The walk follows the spec's search tree: node N's two records are the networks with bit `depth` 0 (left) and 1
// (right); a record below node_count is another node, node_count is "no data", node_count + 16 and up point into
// the data section (libmaxminddb classifies them: MMDB_RECORD_TYPE_*; INVALID points past the file).
#include "host/ingest/mmdb_networks.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace planb {
namespace {

constexpr uint32_t kIpv4InIpv6Bits = 96;  // ::/96 holds IPv4 in an IPv6 tree

struct DataList {
  MMDB_entry_data_list_s* head = nullptr;
  ~DataList() { MMDB_free_entry_data_list(head); }
};

// A node still to read, or a data record to yield once everything left of it has been.
struct Frame {
  enum Kind { kNode, kData } kind;
  uint32_t node;
  uint32_t depth;  // kNode: bits of the address decided above the node; kData: the network's prefix length
  std::array<uint8_t, 16> bits;
  MMDB_entry_s entry;  // kData
};

bool LowBitsZero(const uint8_t* bits, uint32_t count) {  // the first `count` bits (a multiple of 8) are zero
  for (uint32_t i = 0; i < count / 8; ++i) {
    if (bits[i] != 0) return false;
  }
  return true;
}

void FillRange(const uint8_t* bits, uint32_t from_bit, uint32_t prefix_len, uint32_t total_bits, uint8_t* first,
               uint8_t* last) {
  for (uint32_t b = 0; b < total_bits; ++b) {
    const uint32_t src = from_bit + b;
    const bool one = (bits[src / 8] >> (7 - src % 8)) & 1;
    const uint8_t mask = static_cast<uint8_t>(0x80 >> (b % 8));
    if (one) first[b / 8] |= mask;
    if (one || b >= prefix_len) last[b / 8] |= mask;
  }
}

}  // namespace

Status MmdbFile::Open(const std::string& path, MmdbLimits limits, std::unique_ptr<MmdbFile>* out) {
  // libmaxminddb would open a directory and fail later with a vague I/O error: say what it is.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return Status::IOError(path + ": cannot open the MaxMind DB file: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Status::IOError(path + ": not a regular file (a MaxMind DB file is expected)");
  // An empty file cannot be mapped: libmaxminddb would call that an I/O error.
  if (st.st_size == 0) return Status::Corruption(path + ": not a valid MaxMind DB file: the file is empty");
  std::unique_ptr<MmdbFile> file(new MmdbFile(path, limits));
  errno = 0;
  const int rc = MMDB_open(path.c_str(), MMDB_MODE_MMAP, &file->mmdb_);
  if (rc != MMDB_SUCCESS) {
    std::string what = "not a valid MaxMind DB file";
    if (rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR) {
      what = std::string("cannot read the MaxMind DB file") +
             (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : "");
    }
    return file->Error(what, rc);
  }
  file->open_ = true;
  if (file->ip_version() != 4 && file->ip_version() != 6) {
    return Status::Corruption(path + ": not a valid MaxMind DB file: ip_version " + std::to_string(file->ip_version()) +
                              " (4 or 6 expected)");
  }
  *out = std::move(file);
  return Status::Ok();
}

MmdbFile::~MmdbFile() {
  if (open_) MMDB_close(&mmdb_);
}

Status MmdbFile::Error(const std::string& what, int mmdb_status) const {
  const std::string message = path_ + ": " + what + ": " + MMDB_strerror(mmdb_status);
  if (mmdb_status == MMDB_FILE_OPEN_ERROR || mmdb_status == MMDB_IO_ERROR) return Status::IOError(message);
  return Status::Corruption(message);
}

std::string MmdbFile::database_type() const {
  return mmdb_.metadata.database_type != nullptr ? mmdb_.metadata.database_type : "";
}

std::vector<std::string> MmdbFile::languages() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < mmdb_.metadata.languages.count; ++i) names.emplace_back(mmdb_.metadata.languages.names[i]);
  return names;
}

Status MmdbFile::FindIpv4StartNode(bool* found, uint32_t* node) const {
  *found = false;
  if (ip_version() != 6) return Status::Ok();
  uint32_t current = 0;
  for (uint32_t depth = 0; depth < kIpv4InIpv6Bits; ++depth) {
    MMDB_search_node_s n;
    const int rc = MMDB_read_node(&mmdb_, current, &n);
    if (rc != MMDB_SUCCESS) return Error("corrupt search tree at node " + std::to_string(current), rc);
    if (n.left_record_type != MMDB_RECORD_TYPE_SEARCH_NODE) return Status::Ok();
    current = static_cast<uint32_t>(n.left_record);
  }
  *found = true;
  *node = current;
  return Status::Ok();
}

Status MmdbFile::Yield(const uint8_t* bits, uint32_t prefix_len, MMDB_entry_s entry,
                       const std::function<Status(const MmdbNetwork&)>& visit, MmdbNetwork* network) const {
  const bool v6_tree = ip_version() == 6;
  const bool ipv4 = !v6_tree || (prefix_len >= kIpv4InIpv6Bits && LowBitsZero(bits, kIpv4InIpv6Bits));
  network->ipv6 = !ipv4;
  network->first.fill(0);
  network->last.fill(0);
  const uint32_t from_bit = v6_tree && ipv4 ? kIpv4InIpv6Bits : 0;
  network->prefix_len = static_cast<uint8_t>(prefix_len - from_bit);
  FillRange(bits, from_bit, prefix_len - from_bit, ipv4 ? 32 : 128, network->first.data(), network->last.data());

  DataList list;
  const int rc = MMDB_get_entry_data_list(&entry, &list.head);
  // Built only on error: a file has millions of records.
  const auto where = [&entry] { return " (the record at data offset " + std::to_string(entry.offset) + ")"; };
  if (rc != MMDB_SUCCESS) return Error("corrupt data section" + where(), rc);
  network->record_json.clear();
  const MMDB_entry_data_list_s* cursor = list.head;
  const Status s = AppendMmdbJson(&cursor, limits_.record, &network->record_json);
  if (!s.ok()) return Status(s.code(), path_ + ": " + s.message() + where());
  return visit(*network);
}

Status MmdbFile::ForEachNetwork(const std::function<Status(const MmdbNetwork&)>& visit) const {
  bool has_ipv4 = false;
  uint32_t ipv4_node = 0;
  PLANB_RETURN_IF_ERROR(FindIpv4StartNode(&has_ipv4, &ipv4_node));
  const uint32_t total_bits = ip_version() == 6 ? 128 : 32;
  // A well-formed tree reaches each node once (aliases are skipped), so more nodes than node_count is a cycle;
  // the depth check alone would end a cycle only after 2^128 steps.
  uint64_t visits = 0;
  uint64_t networks = 0;
  MmdbNetwork network;
  std::vector<Frame> stack;
  stack.push_back(Frame{Frame::kNode, 0, 0, {}, {}});
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    if (frame.kind == Frame::kData) {
      if (++networks > limits_.max_networks) {
        return Status::Invalid(path_ + ": more networks than the limit of " + std::to_string(limits_.max_networks));
      }
      PLANB_RETURN_IF_ERROR(Yield(frame.bits.data(), frame.depth, frame.entry, visit, &network));
      continue;
    }
    if (++visits > node_count()) {
      return Status::Corruption(path_ + ": corrupt search tree: more nodes reached than its node_count " +
                                std::to_string(node_count()) + " (a cycle)");
    }
    MMDB_search_node_s node;
    const int rc = MMDB_read_node(&mmdb_, frame.node, &node);
    if (rc != MMDB_SUCCESS) return Error("corrupt search tree at node " + std::to_string(frame.node), rc);
    const uint32_t prefix_len = frame.depth + 1;
    // Right first onto the stack, so that the left (lower) network comes out first.
    for (int side = 1; side >= 0; --side) {
      const uint64_t record = side ? node.right_record : node.left_record;
      const uint8_t type = side ? node.right_record_type : node.left_record_type;
      std::array<uint8_t, 16> bits = frame.bits;
      if (side) bits[frame.depth / 8] |= static_cast<uint8_t>(0x80 >> (frame.depth % 8));
      if (type == MMDB_RECORD_TYPE_EMPTY) continue;
      if (type == MMDB_RECORD_TYPE_DATA) {
        stack.push_back(
            Frame{Frame::kData, 0, prefix_len, bits, side ? node.right_record_entry : node.left_record_entry});
        continue;
      }
      if (type != MMDB_RECORD_TYPE_SEARCH_NODE) {
        // libmaxminddb calls a record INVALID past the data section, and also at 0 (the root again).
        return Status::Corruption(path_ + ": corrupt search tree: node " + std::to_string(frame.node) + "'s " +
                                  (side ? "right" : "left") + " record (" + std::to_string(record) + ") points " +
                                  (record == 0 ? "back to the root node" : "outside the file"));
      }
      if (prefix_len >= total_bits) {
        return Status::Corruption(path_ + ": corrupt search tree: deeper than " + std::to_string(total_bits) +
                                  " bits at node " + std::to_string(frame.node));
      }
      const bool ipv4_path = prefix_len == kIpv4InIpv6Bits && LowBitsZero(bits.data(), kIpv4InIpv6Bits);
      if (has_ipv4 && record == ipv4_node && !ipv4_path) continue;  // an alias of ::/96, walked there
      stack.push_back(Frame{Frame::kNode, static_cast<uint32_t>(record), prefix_len, bits, {}});
    }
  }
  return Status::Ok();
}

}  // namespace planb
