// How many times a staged batch's merge was tried and failed, or killed the merging process: the count behind
// quarantine (quarantine.h). Two records, both in staging/ beside the zips:
//   "<N>.zip.attempts"  the count and the last error, written durably after an attempt that failed;
//   ".merge_in_flight"  the batch being merged now and its count before this attempt, rewritten in place before
//                       each attempt and blanked after it. A merger that dies mid-attempt (kill -9, an LMDB
//                       assertion) leaves it naming the batch; the next merge run counts that death into the
//                       batch's own file (FoldMergeDeath) before anything else. One record per merge slot
//                       (merge_threads): slot 0 is ".merge_in_flight", slot K ".merge_in_flight.K".
// A death while several batches were in flight does not say which one killed the merger: none is counted, and each
// is marked to be merged alone (no other batch in flight) from then on, where its next death counts.
// The in-flight record is one file for the node, overwritten in place and not fsynced: a dead process's write is
// still in the kernel's page cache, so every death is counted, and an attempt cut short by a power loss (which
// says nothing about the batch) is not. Creating, syncing and renaming a file per attempt cost more than a small
// batch's whole merge transaction on some disks.
#pragma once

#include <cstddef>
#include <string>

#include "planb/status.h"

namespace planb {

// Errors and reasons are one line on disk: escaped (LogValue) and capped at this many bytes.
inline constexpr size_t kMaxRecordedErrorBytes = 1000;

// Merge slots, and so batches merged at once, at most (merge_threads is capped here).
inline constexpr int kMaxMergeSlots = 16;

struct MergeAttempts {
  int count = 0;
  std::string last_error;  // escaped, one line
  // The merger died while this batch and others were in flight: it is merged with no other batch in flight until
  // it is merged or quarantined, so that a death during its merge is its own.
  bool alone = false;
};

// The attempts of staged `zip_path`: its file's count, or one past the in-flight record's when that names it and
// no other record names a staged batch (a death not yet folded; with several, `alone` instead); count 0 and no
// error when nothing says anything (or the records are unreadable).
MergeAttempts ReadMergeAttempts(const std::string& zip_path);
// Durably (written, fsynced, renamed).
Status WriteMergeAttempts(const std::string& zip_path, const MergeAttempts& attempts);
// Drops the batch's attempts file and, when it names the batch, the in-flight record.
void ClearMergeAttempts(const std::string& zip_path);

// Records that `zip_path`, tried `count` times before, is being merged now in merge slot `slot` (0 to
// kMaxMergeSlots - 1; see above: not fsynced).
Status MarkMergeInFlight(const std::string& zip_path, int count, int slot = 0);
// Rewrites that record to say what of the batch is being merged now (`what`: the map and its plugins' labels), so
// that a death there is reported naming them: "the merging process died during the merge of WHAT". Not fsynced,
// like the record; `what` is escaped and cut to fit the record.
Status NoteMergeInFlightPart(const std::string& zip_path, int count, int slot, const std::string& what);
// Blanks the in-flight record of `slot` in `staging_dir` (the attempt ended; its outcome is recorded by the caller).
void EndMergeInFlight(const std::string& staging_dir, int slot = 0);
// When in-flight records of `staging_dir` name batches still staged there, those attempts died with their merger:
// one such record counts the death in its batch's attempts file; several mark each of their batches `alone`
// (durably). Then blanks every record. Idempotent.
Status FoldMergeDeath(const std::string& staging_dir);

}  // namespace planb
