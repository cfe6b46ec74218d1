// Proves that code allocates nothing without replacing the allocator: `body` runs in a forked child whose heap
// can neither grow nor reuse memory, so any malloc, calloc, realloc or operator new in it fails (operator new
// throws; across a noexcept plugin call that ends the child with SIGABRT).
//
// How: the child lowers RLIMIT_DATA to 0 (brk and new private writable mappings then fail; the stack and
// existing mappings, such as LMDB's, are not affected), then allocates every byte the allocator still holds,
// size class by size class, until a full pass gets nothing; it checks that malloc(1) and operator new now fail
// before it calls `body`. Linux only.
//
// REQUIRES: `body` only reads what exists before the fork (build keys, expected answers and readers first) and
// reports through its return value: the child ends with _exit(body()), running no destructors or atexit
// handlers. LMDB forbids using an environment after fork() for writing and for new transactions; reading
// through a transaction and cursor opened before the fork, as a warm MapReader does, only reads the map.
#pragma once

#include <functional>

namespace planb::testing {

struct HeapTrapResult {
  bool forked = false;  // false: fork() failed
  bool armed = false;   // the child proved that allocations fail before running `body`
  int exit_code = -1;   // the child's exit status (what `body` returned once armed); -1 when it did not exit
  int signal = 0;       // the signal that ended the child, if one did
};

HeapTrapResult RunWithoutHeap(const std::function<int()>& body);

}  // namespace planb::testing

// ASan and TSan (the sanitizer passes, PLANB_UNDER_SANITIZER) serve allocations from an allocator of their own
// that maps its memory up front, which the trap cannot starve: a test using RunWithoutHeap starts with this line.
#ifdef PLANB_UNDER_SANITIZER
#define PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER() \
  GTEST_SKIP() << "the heap trap starves glibc's allocator, which the sanitizer replaces"
#else
#define PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER() static_cast<void>(0)
#endif
