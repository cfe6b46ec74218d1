// Counting heap allocations for `planb conform`'s warm-lookup check. The counting itself lives in the planb
// executable (alloc_replace.cc replaces operator new and malloc there, and so for every plugin it loads); library
// code only reads it through these functions, so that test binaries linking the library keep their allocator.
// Counts every allocation of every thread while enabled; conform runs its lookups on one thread.
#pragma once

#include <cstdint>

namespace planb {

// What alloc_replace.cc installs (once, before main).
struct AllocationHooks {
  void (*set_counting)(bool on);
  uint64_t (*count)();  // allocations counted so far (not reset by set_counting)
};

void InstallAllocationHooks(const AllocationHooks* hooks);
// Whether this process counts allocations (false in processes without alloc_replace.cc).
bool AllocationCountingAvailable();
// REQUIRES: AllocationCountingAvailable().
void SetAllocationCounting(bool on);
uint64_t AllocationCount();

}  // namespace planb
