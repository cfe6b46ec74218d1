// `planb backup DEST` (docs/operations.md, "Backup and restore"): a consistent copy of a home that another
// process (a running `planb serve`) keeps changing, which `planb serve` accepts as its home.
//
// Order makes it consistent without stopping anything: the batch zips (staging/, quarantine/, retained/) are
// copied first, then each shard with LMDB's compacting copy under one read transaction. A batch merged between
// the two is then in both, and merging is exactly-once by batch id, so the restored node merges it no second time;
// a batch staged after the zips were copied was not merged into the shard copies either: the restored node gets
// it from its peers (catch-up) or from the load retried.
// The copy is built in a hidden sibling of DEST, verified (every shard by planb-verify in a child process, every
// zip read back and compared with what was read), made durable, and only then renamed to DEST: a failure leaves
// nothing at DEST and no partial copy.
// The source home is only read (shards opened read-only, nothing created); symbolic links in it are skipped,
// never followed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "host/runtime.h"
#include "planb/status.h"

namespace planb {

struct BackupReport {
  uint64_t shards = 0;
  uint64_t shard_bytes = 0;
  uint64_t zips = 0;         // staged, quarantined and retained batch files (and their reason/attempt files)
  uint64_t zip_bytes = 0;
  uint64_t vanished = 0;     // files that went between listing and copying (merged or pruned meanwhile)
  uint64_t links_skipped = 0;
};

// Copies `runtime`'s home into `dest`, which must not exist or be an empty directory, on the filesystem of its
// parent. `progress` gets one line per step (may be null). Errors: DEST not empty or not a directory, its parent
// missing or not writable, a source file that cannot be read, a shard copy that does not verify, the disk full;
// each names the path.
Status BackupHome(Runtime& runtime, const std::string& dest, BackupReport* report,
                  const std::function<void(const std::string&)>& progress);

}  // namespace planb
