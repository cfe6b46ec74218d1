// Memory straight from mmap for the read indexes: reserved at its largest size without being touched (pages are
// committed as they are written), so an index being built never reallocates and copies, and trimmed to what it
// used afterwards. Large blocks are aligned to 2 MiB so that transparent huge pages can back them: random lookups
// over hundreds of megabytes then miss the TLB far less. Move-only; not thread-safe while being written.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace planb {

class AnonymousMemory {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;

  AnonymousMemory() = default;
  ~AnonymousMemory() { Release(); }
  AnonymousMemory(AnonymousMemory&& other) noexcept { *this = std::move(other); }
  AnonymousMemory& operator=(AnonymousMemory&& other) noexcept {
    if (this != &other) {
      Release();
      base_ = std::exchange(other.base_, nullptr);
      mapped_ = std::exchange(other.mapped_, 0);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  AnonymousMemory(const AnonymousMemory&) = delete;
  AnonymousMemory& operator=(const AnonymousMemory&) = delete;

  // Reserves `size` bytes, zero-filled (nothing committed until written). False when the address space cannot
  // be had.
  bool Reserve(size_t size) {
    Release();
    if (size == 0) size = 1;
    const size_t padded = Round(size, kPage) + (size >= kHugePage ? kHugePage : 0);
    void* p = ::mmap(nullptr, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    base_ = static_cast<uint8_t*>(p);
    mapped_ = padded;
    data_ = size >= kHugePage
                ? base_ + (Round(reinterpret_cast<uintptr_t>(base_), kHugePage) - reinterpret_cast<uintptr_t>(base_))
                : base_;
    size_ = size;
    if (size >= kHugePage) (void)::madvise(data_, Round(size, kHugePage), MADV_HUGEPAGE);
    return true;
  }

  // Gives back the pages past the first `used` bytes (rounded up to a page).
  void Trim(size_t used) {
    if (base_ == nullptr) return;
    uint8_t* keep_end = data_ + Round(used == 0 ? 1 : used, kPage);
    uint8_t* map_end = base_ + mapped_;
    if (keep_end < map_end) {
      ::munmap(keep_end, static_cast<size_t>(map_end - keep_end));
      mapped_ = static_cast<size_t>(keep_end - base_);
    }
    if (used < size_) size_ = used;
  }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kPage = 4096;
  static size_t Round(size_t n, size_t to) { return (n + to - 1) / to * to; }
  void Release() {
    if (base_ != nullptr) ::munmap(base_, mapped_);
    base_ = data_ = nullptr;
    mapped_ = size_ = 0;
  }

  uint8_t* base_ = nullptr;  // what mmap returned
  size_t mapped_ = 0;        // bytes mapped from base_
  uint8_t* data_ = nullptr;  // base_, or the first 2 MiB boundary in it
  size_t size_ = 0;
};

}  // namespace planb
