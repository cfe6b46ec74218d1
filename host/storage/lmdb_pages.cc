#include "host/storage/lmdb_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "planb/lmdb.h"

namespace planb {
namespace {

// liblmdb 0.9 (mdb.c), native byte order. MDB_page: pgno u64, pad u16, flags u16, then lower u16 and upper u16
// (or, for an overflow page, the page count u32), then the node offsets (u16 each).
constexpr size_t kPageHeader = 16;
constexpr size_t kPageFlags = 10;
constexpr size_t kPageLower = 12;
constexpr size_t kPageUpper = 14;
constexpr size_t kOverflowCount = 12;
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kLeaf2 = 0x20;
// MDB_node: lo u16, hi u16, flags u16, ksize u16, then the key and the data. A branch node's child page is
// lo | hi << 16 | flags << 32; a leaf node's data size is lo | hi << 16.
constexpr size_t kNodeHeader = 8;
constexpr uint16_t kBigData = 0x01, kSubData = 0x02;
// MDB_db (48 bytes): pad u32, flags u16, depth u16, branch, leaf, overflow pages, entries, root (u64 each).
constexpr size_t kDbSize = 48;
constexpr size_t kDbRoot = 40;
// MDB_meta after the page header: magic u32, version u32, address u64, mapsize u64, dbs[2] (free, main),
// last_pg u64, txnid u64.
constexpr size_t kMetaFreeDb = kPageHeader + 24;
constexpr size_t kMetaMainDb = kMetaFreeDb + kDbSize;
constexpr size_t kMetaTxnid = kPageHeader + 128;
constexpr uint64_t kNoRoot = ~uint64_t{0};
constexpr uint64_t kMetaPages = 2;

template <typename T>
T Load(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

std::string Page(uint64_t number) { return "page " + std::to_string(number); }

class PageWalk {
 public:
  PageWalk(const uint8_t* base, uint64_t pages, uint64_t page_size)
      : base_(base), pages_(pages), page_size_(page_size), used_(pages, 0) {}

  // Marks every page of the tree at `root` (and of the tables whose records its leaves hold) as used.
  Status MarkTree(uint64_t root, const std::string& table) {
    std::vector<uint64_t> pending;
    if (root != kNoRoot) pending.push_back(root);
    while (!pending.empty()) {
      const uint64_t number = pending.back();
      pending.pop_back();
      PLANB_RETURN_IF_ERROR(Claim(number, table));
      const uint8_t* page = base_ + number * page_size_;
      const uint16_t flags = Load<uint16_t>(page + kPageFlags);
      if ((flags & (kBranch | kLeaf)) == 0 || (flags & kOverflow) != 0) {
        return Status::Corruption(table + ": " + Page(number) + " is not a branch or leaf page");
      }
      if ((flags & kLeaf2) != 0) continue;  // packed DUPFIXED values: no nodes, no children
      const uint16_t lower = Load<uint16_t>(page + kPageLower);
      const uint16_t upper = Load<uint16_t>(page + kPageUpper);
      if (lower < kPageHeader || lower > upper || upper > page_size_ || (lower - kPageHeader) % 2 != 0) {
        return Status::Corruption(table + ": " + Page(number) + " has a broken header");
      }
      for (size_t i = 0; i < (lower - kPageHeader) / 2; ++i) {
        const size_t offset = Load<uint16_t>(page + kPageHeader + 2 * i);
        if (offset < upper || offset + kNodeHeader > page_size_) {
          return Status::Corruption(table + ": " + Page(number) + " has a node outside its page");
        }
        const uint8_t* node = page + offset;
        const uint64_t lo = Load<uint16_t>(node), hi = Load<uint16_t>(node + 2);
        const uint16_t node_flags = Load<uint16_t>(node + 4);
        const size_t key_size = Load<uint16_t>(node + 6);
        if ((flags & kBranch) != 0) {
          pending.push_back(lo | hi << 16 | uint64_t{node_flags} << 32);
          continue;
        }
        const size_t data_at = offset + kNodeHeader + key_size;
        const uint64_t data_size = lo | hi << 16;
        if ((node_flags & kBigData) != 0) {
          if (data_at + sizeof(uint64_t) > page_size_) return Status::Corruption(table + ": " + Page(number) + " is cut");
          PLANB_RETURN_IF_ERROR(ClaimOverflow(Load<uint64_t>(page + data_at), data_size, table));
        } else if ((node_flags & kSubData) != 0) {
          if (data_at + kDbSize > page_size_) return Status::Corruption(table + ": " + Page(number) + " is cut");
          const uint64_t sub_root = Load<uint64_t>(page + data_at + kDbRoot);
          if (sub_root != kNoRoot) pending.push_back(sub_root);
        }
      }
    }
    return Status::Ok();
  }

  // The free list's entries, read through LMDB: each value is an IDL, a count then that many page numbers.
  Status CheckFreeList(MDB_txn* txn) {
    std::vector<uint8_t> listed(pages_, 0);
    MDB_cursor* cursor = nullptr;
    PLANB_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(txn, 0, &cursor), "opening the free list"));
    MDB_val key, value;
    int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
    Status status;
    for (; rc == MDB_SUCCESS && status.ok(); rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
      const auto* ids = static_cast<const uint8_t*>(value.mv_data);
      const uint64_t count = value.mv_size >= 8 ? Load<uint64_t>(ids) : 0;
      if (value.mv_size < 8 || value.mv_size / 8 - 1 != count || value.mv_size % 8 != 0) {
        status = Status::Corruption("free list: an entry of " + std::to_string(value.mv_size) +
                                    " bytes is not a page list");
        break;
      }
      for (uint64_t i = 1; i <= count && status.ok(); ++i) {
        const uint64_t number = Load<uint64_t>(ids + 8 * i);
        if (number < kMetaPages || number >= pages_) {
          status = Status::Corruption("free list: lists " + Page(number) + ", outside the file's " +
                                      std::to_string(pages_) + " pages");
        } else if (listed[number] != 0) {
          status = Status::Corruption("free list: lists " + Page(number) + " twice");
        } else if (used_[number] != 0) {
          status = Status::Corruption("free list: lists " + Page(number) + ", which is in use by a table");
        }
        if (status.ok()) listed[number] = 1;
      }
    }
    mdb_cursor_close(cursor);
    PLANB_RETURN_IF_ERROR(status);
    if (rc != MDB_NOTFOUND) return LmdbStatus(rc, "reading the free list");
    return Status::Ok();
  }

 private:
  Status Claim(uint64_t number, const std::string& table) {
    if (number < kMetaPages || number >= pages_) {
      return Status::Corruption(table + ": refers to " + Page(number) + ", outside the file's " +
                                std::to_string(pages_) + " pages");
    }
    if (used_[number] != 0) return Status::Corruption(table + ": " + Page(number) + " is reached twice");
    used_[number] = 1;
    if (Load<uint64_t>(base_ + number * page_size_) != number) {
      return Status::Corruption(table + ": " + Page(number) + " says it is another page");
    }
    return Status::Ok();
  }

  Status ClaimOverflow(uint64_t first, uint64_t data_size, const std::string& table) {
    PLANB_RETURN_IF_ERROR(Claim(first, table));
    const uint8_t* page = base_ + first * page_size_;
    const uint64_t count = Load<uint32_t>(page + kOverflowCount);
    if ((Load<uint16_t>(page + kPageFlags) & kOverflow) == 0 || count == 0 ||
        count * page_size_ < kPageHeader + data_size || count > pages_ - first) {
      return Status::Corruption(table + ": " + Page(first) + " is not an overflow page holding its value");
    }
    for (uint64_t i = 1; i < count; ++i) {
      if (used_[first + i] != 0) return Status::Corruption(table + ": " + Page(first + i) + " is reached twice");
      used_[first + i] = 1;
    }
    return Status::Ok();
  }

  const uint8_t* base_;
  uint64_t pages_;
  uint64_t page_size_;
  std::vector<uint8_t> used_;
};

}  // namespace

Status CheckPages(const std::string& file, MDB_txn* txn, uint64_t txnid, uint64_t pages, uint64_t page_size) {
  if (pages < kMetaPages || page_size < kMetaTxnid + 8) return Status::Corruption("LMDB file has no meta pages");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(file + ": " + std::strerror(errno));
  const size_t length = pages * page_size;
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (map == MAP_FAILED) return Status::IOError("mapping " + file + ": " + std::strerror(map_error));
  const auto* base = static_cast<const uint8_t*>(map);
  // The meta LMDB reads (mdb_env_pick_meta): meta 1 only when its transaction id is larger, so meta 0 on a tie. It
  // must be the one this read transaction saw; a forged tie must not let the walk check the other meta's trees.
  const uint64_t txnid0 = Load<uint64_t>(base + kMetaTxnid);
  const uint64_t txnid1 = Load<uint64_t>(base + page_size + kMetaTxnid);
  const uint8_t* meta = txnid1 > txnid0 ? base + page_size : base;
  Status status;
  if (Load<uint64_t>(meta + kMetaTxnid) != txnid) {
    status = Status::Corruption("the current meta page has transaction " +
                                std::to_string(Load<uint64_t>(meta + kMetaTxnid)) + ", not " + std::to_string(txnid));
  } else {
    PageWalk walk(base, pages, page_size);
    status = walk.MarkTree(Load<uint64_t>(meta + kMetaFreeDb + kDbRoot), "free list");
    if (status.ok()) status = walk.MarkTree(Load<uint64_t>(meta + kMetaMainDb + kDbRoot), "tables");
    if (status.ok()) status = walk.CheckFreeList(txn);
  }
  ::munmap(map, length);
  return status;
}

}  // namespace planb
