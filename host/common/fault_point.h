// Named crash points for fault-injection tests: when the environment variable PLANB_FAULT names a point, the
// process kills itself with SIGKILL on reaching it (as kill -9 would), so tests can prove that a restart
// repairs everything. PLANB_FAULT is read at each point (one getenv), so a test may set and unset it.
// Points (keep docs/operations.md in step):
//   receive.mid_upload     a chunk of an upload has been written, the upload is not complete
//   receive.after_stage    a batch was renamed into staging/, before the sender is told
//   merge.mid_batch        the first map of a batch with several maps has committed, the others not
//   merge.before_commit    a map's merge write transaction is complete but not committed
//   merge.after_commit     every map of a batch committed, the staged zip not yet deleted
//   verify.hang            the batch verifier child never finishes (tests the verification deadline)
// A point may also simulate a full disk instead: PLANB_FAULT=receive.disk_full makes chunk writes fail ENOSPC.
#pragma once

namespace planb {

// True when PLANB_FAULT equals `point`.
bool FaultPointActive(const char* point);
// SIGKILLs this process when PLANB_FAULT equals `point`.
void FaultPoint(const char* point);

}  // namespace planb
