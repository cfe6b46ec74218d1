// Linked into the planb executable only: replaces operator new (every form) and malloc/calloc/realloc with
// versions that count calls while counting is on (alloc_count.h), then allocate as glibc does. The executable's
// definitions take precedence over libstdc++'s and libc's for the plugins it loads too, so a plugin's allocation
// in Store::Get is counted. Replacing malloc this way is what glibc documents ("Replacing malloc"): free,
// memalign and friends stay glibc's, which is right because every block still comes from glibc.
#include <atomic>
#include <cstdlib>
#include <new>

#include "host/kit/alloc_count.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_count{0};

inline void Note() {
  if (g_counting.load(std::memory_order_relaxed)) g_count.fetch_add(1, std::memory_order_relaxed);
}

void SetCounting(bool on) { g_counting.store(on); }
uint64_t Count() { return g_count.load(); }

const planb::AllocationHooks kHooks{&SetCounting, &Count};
const bool kInstalled = (planb::InstallAllocationHooks(&kHooks), true);

void* NewOrThrow(size_t size) {
  Note();
  if (size == 0) size = 1;
  for (;;) {
    if (void* p = __libc_malloc(size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* AlignedNewOrThrow(size_t size, std::align_val_t alignment) {
  Note();
  if (size == 0) size = 1;
  for (;;) {
    if (void* p = __libc_memalign(static_cast<size_t>(alignment), size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  Note();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  Note();
  return __libc_calloc(count, size);
}
void* realloc(void* p, size_t size) {
  Note();
  return __libc_realloc(p, size);
}
}

void* operator new(size_t size) { return NewOrThrow(size); }
void* operator new[](size_t size) { return NewOrThrow(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return NewOrThrow(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return NewOrThrow(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(size_t size, std::align_val_t a) { return AlignedNewOrThrow(size, a); }
void* operator new[](size_t size, std::align_val_t a) { return AlignedNewOrThrow(size, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
