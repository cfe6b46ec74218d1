// planb-verify: checks LMDB files that came from outside, started by planb (host/storage/verifier_child.h).
#include "host/storage/verifier_child.h"

int main(int argc, char** argv) { return planb::RunVerifierChild(argc, argv); }
