// staging/: the sequential store of batches waiting to be merged. Each batch is a directory named by a 20-digit
// sequence number, so name order is arrival order. Several processes may stage at once (a lock file serialises
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

  // Moves the complete batch directory `dir` into staging/ under the next sequence number (durably).
  Status Stage(const std::string& dir, uint64_t* sequence);
  // Batches in `directory` (staging/ or merging/), oldest first. Ignores anything not named like a batch.
  static Status List(const std::string& directory, std::vector<StagedBatch>* out);
  static std::string BatchName(uint64_t sequence);

 private:
  const Home& home_;
};

}  // namespace planb
