// Linked into the planb executable instead of alloc_replace.cc in sanitizer builds (PLANB_SANITIZE,
// docs/testing.md): ASan and TSan bring their own allocator, which replacing malloc with glibc's would bypass
// (their free() would then see blocks they never handed out). Their runtimes call a hook on every allocation
// instead, operator new included and whichever library or plugin allocates, so `planb conform` counts the same.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "host/kit/alloc_count.h"

extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                                         void (*free_hook)(const volatile void*));

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_count{0};

void OnMalloc(const volatile void*, size_t) {
  if (g_counting.load(std::memory_order_relaxed)) g_count.fetch_add(1, std::memory_order_relaxed);
}
void OnFree(const volatile void*) {}

void SetCounting(bool on) { g_counting.store(on); }
uint64_t Count() { return g_count.load(); }

const planb::AllocationHooks kHooks{&SetCounting, &Count};
const bool kInstalled = (__sanitizer_install_malloc_and_free_hooks(&OnMalloc, &OnFree),
                         planb::InstallAllocationHooks(&kHooks), true);

}  // namespace
