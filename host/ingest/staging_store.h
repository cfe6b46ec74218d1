// staging/: the sequential store of batches waiting to be merged. Each batch is a zip (batch_zip.h) named by a
// 20-digit sequence number plus ".zip", so name order is arrival order. Several processes may stage at once (a lock file serialises
// the numbering); the sequence never goes back, even when staging/ is empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/storage/home.h"
#include "planb/status.h"

namespace planb {

struct StagedBatch {
  uint64_t sequence = 0;
  std::string path;
};

class StagingStore {
 public:
  explicit StagingStore(const Home& home) : home_(home) {}

  // Moves the complete batch zip `zip_path` (same filesystem) into staging/ under the next sequence number,
  // durably (rename + directory fsync). With `link_only`, hard-links instead and leaves `zip_path` in place
  // (a load that also uploads the same zip to other nodes).
  Status Stage(const std::string& zip_path, uint64_t* sequence, bool link_only = false);
  // Staged batches, oldest first. Ignores anything not named like a batch (temp files, .lock, .sequence).
  Status List(std::vector<StagedBatch>* out) const;
  // Whether batch `sequence` is still waiting in staging/ (not yet merged).
  bool Contains(uint64_t sequence) const;
  // "00000000000000000007.zip"
  static std::string BatchFileName(uint64_t sequence);
  // "00000000000000000007"
  static std::string BatchName(uint64_t sequence);
  // The sequence of a name like BatchFileName's ("<20 digits>.zip" only: temp files ("….zip.tmp"), .lock and
  // .sequence are not batches).
  static bool ParseBatchFileName(const std::string& name, uint64_t* sequence);

 private:
  const Home& home_;
};

}  // namespace planb
