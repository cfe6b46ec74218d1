// The allocator policy planb sets for bulk transfers (host/common/bulk_buffers.h): megabyte blocks come from the
// heap, unless the operator set malloc tunables. Run in fresh processes (tests/bulk_buffers/bulk_buffers_check.cc):
// the policy is the process's, and this test process's heap is not a fresh one.
#include "host/common/bulk_buffers.h"

#include <gtest/gtest.h>

#include "support/heap_trap.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

int Check(const std::vector<std::string>& env, bool policy) {
  ProcessSpec spec;
  spec.binary = "/usr/bin/env";
  spec.args = {"-u", "GLIBC_TUNABLES"};
  spec.args.insert(spec.args.end(), env.begin(), env.end());
  spec.args.push_back(PLANB_BULK_BUFFERS_CHECK);
  if (policy) spec.args.push_back("policy");
  return RunProcess(spec).exit_code;
}

TEST(BulkBuffersTest, MegabyteBlocksComeFromTheHeapUnderThePolicy) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  EXPECT_EQ(Check({}, /*policy=*/false), 1);  // glibc's default maps them: the policy is what changes it
  EXPECT_EQ(Check({}, /*policy=*/true), 0);
}

TEST(BulkBuffersTest, TheOperatorsMallocTunablesWin) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  EXPECT_EQ(Check({"GLIBC_TUNABLES=glibc.malloc.perturb=0"}, /*policy=*/true), 1);
  // A tunable of another part of glibc is not the operator's say on malloc.
  EXPECT_EQ(Check({"GLIBC_TUNABLES=glibc.cpu.hwcap_mask=0"}, /*policy=*/true), 0);
}

}  // namespace
}  // namespace planb::testing
