// Named crash points for fault-injection tests: when the environment variable PLANB_FAULT names a point, the
// process kills itself with SIGKILL on reaching it (as kill -9 would), so tests can prove that a restart
// repairs everything. PLANB_FAULT is read at each point (one getenv), so a test may set and unset it.
// Points (keep docs/storage-nodes.md, docs/protocol.md and docs/maintenance.md in step):
//   receive.mid_upload     a chunk of an upload has been written, the upload is not complete
//   receive.after_stage    a batch was renamed into staging/, before the sender is told
//   merge.mid_batch        the first map of a batch with several maps has committed, the others not
//   merge.before_commit    a map's merge write transaction is complete but not committed
//   merge.after_commit     every map of a batch committed, the staged zip not yet deleted
//   merge.abort:<batch id>  (FaultPointActiveFor) the merge of the batch with that manifest id calls abort(), as
//                          an LMDB assertion would: every restart dies on it again until it is quarantined
//   maintain.before_commit a map's maintenance (condensation, retention) transaction is complete, not committed
//   verify.hang            the batch verifier child never finishes (tests the verification deadline)
//   reclaim.before_swap    a shard's compact copy is complete and checked, not yet exchanged with the shard
//   reclaim.after_swap     the copy was exchanged in (shards/<map>), the old shard not yet deleted
//   snapshot.mid_transfer  the first FETCH_DATA of a served snapshot has been queued for sending (the node dies
//                          with a snapshot transfer under way)
// Some points change behaviour instead of killing (FaultPointActive):
//   read.stall:<map>       (FaultPointActiveFor) a remote READ of that map examines rows of 1 MiB that take a
//                          millisecond each until its budget ends (remote_read_timeout, max_remote_bytes_examined,
//                          or the node stopping): a costly read that holds a read thread
//   receive.disk_full      chunk writes fail with ENOSPC
//   snapshot.corrupt       one byte of every FETCH_DATA payload is flipped (the requester's checksum must catch it)
//   snapshot_diff.corrupt  snapshot diffs are made with their last byte flipped after the checksum is taken
//                          from the flipped file: it arrives whole but its last part does not unzip (the requester
//                          must refuse it and ask the same node for the whole snapshot)
//   snapshot.truncate      snapshot zips are served as if they ended at half their size: FETCH_DATA past the half
//                          carries 0 bytes (the requester must notice the short zip)
//   merge.thread_exit      `planb serve`'s merge thread ends after its first pass that merged a batch, as a thread
//                          that died would (/readyz and the metrics must say so; staged batches wait)
#pragma once

#include <string_view>

namespace planb {

// True when PLANB_FAULT equals `point`.
bool FaultPointActive(const char* point);
// True when PLANB_FAULT equals `point` + ":" + `subject` (a point aimed at one batch, e.g. merge.abort:<id>).
bool FaultPointActiveFor(const char* point, std::string_view subject);
// SIGKILLs this process when PLANB_FAULT equals `point`.
void FaultPoint(const char* point);

}  // namespace planb
