#include "host/kit/alloc_count.h"

namespace planb {
namespace {

const AllocationHooks* g_hooks = nullptr;  // set before main, read after: no race

}  // namespace

void InstallAllocationHooks(const AllocationHooks* hooks) { g_hooks = hooks; }
bool AllocationCountingAvailable() { return g_hooks != nullptr; }
void SetAllocationCounting(bool on) { g_hooks->set_counting(on); }
uint64_t AllocationCount() { return g_hooks->count(); }

}  // namespace planb
