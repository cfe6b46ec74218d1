// The verifier program, planb-verify (host/verifier_main.cc): a fresh process that checks LMDB map files from
// outside (lmdb_check.h) for lmdb_verifier.cc, which starts it. A fresh program rather than a fork of the node: a
// fork of a multi-threaded node copies only the forking thread, so a lock another thread held at that instant (in
// a plugin, the allocator, a sanitizer's runtime) stays held in the child forever and the check would hang.
//
// Its report, on descriptor kReportFd (native byte order: the same build writes and reads it):
//   'B' <uint32 index>            about to check map `index` of the job (so a crash or a hang is blamed on it)
//   'E' <int32 code> <message>    map `index` failed; the message runs to the end of the pipe
// Exit 0 with no 'E' means every map passed. A crash, by any signal, is a verdict too: the file is corrupt.
#pragma once

#include <cstdint>

namespace planb {

constexpr char kVerifyBegin = 'B';
constexpr char kVerifyError = 'E';
// The report pipe's descriptor in the child (0 is /dev/null; 1 and 2 are the node's, for sanitizer reports).
constexpr int kVerifyReportFd = 3;
// Exit code when the child was started wrong (no report pipe, malformed arguments): no verdict on any file.
constexpr int kVerifyUsageExit = 2;

// main() of planb-verify: args are the program's, as verify_job.h encodes them.
int RunVerifierChild(int argc, char** argv);

}  // namespace planb
