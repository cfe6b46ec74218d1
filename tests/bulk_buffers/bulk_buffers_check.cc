// A fresh process for tests/host/common/bulk_buffers_test.cc: glibc's allocator as a program starts with it,
// then (with argument "policy") the policy planb sets in its main. Exits 0 when a freed 1 MiB block came from the
// heap, 1 when glibc served it with mmap, 2 on a bad command line.
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "host/common/bulk_buffers.h"

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && std::strcmp(argv[1], "policy") != 0)) return 2;
  if (argc == 2) planb::KeepBulkBuffersInProcess();
  const size_t before = mallinfo2().hblks;
  void* volatile block = std::malloc(1 << 20);
  const size_t during = mallinfo2().hblks;
  std::free(block);
  return during > before ? 1 : 0;
}
