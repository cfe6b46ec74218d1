// planb-verify: checks LMDB files that came from outside, started by planb (host/storage/verifier_child.h).
#include "host/common/standard_descriptors.h"
#include "host/storage/verifier_child.h"

int main(int argc, char** argv) {
  // Its parent may have run with stdout or stderr closed (a program linking libplanb_reader.so): the files it
  // checks must not take those numbers.
  if (!planb::OpenClosedStandardDescriptors()) return planb::kVerifyUsageExit;
  return planb::RunVerifierChild(argc, argv);
}
