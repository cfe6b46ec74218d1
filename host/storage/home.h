// The home directory and its subdirectories, as the design lays them out:
//   writer/    streams being written by `load` (one LMDB per map)
//   receive/   uploads arriving from other nodes
//   staging/   batches waiting to be merged, in sequence order
//   merging/   the batch being merged
//   shards/    one LMDB per map: the merged state
//   snapshots/ copies of shards fetched from storage nodes (docs/snapshots.md)
//   outgoing/  snapshot zips and snapshot diffs a storage node is serving to readers (scratch: cleared when serve
//              starts)
//   retained/  zips of batches a storage node merged, kept for its peers' catch-up (host/catchup/batch_retention.h)
#pragma once

#include <string>
#include <vector>

#include "planb/status.h"

namespace planb {

class Home {
 public:
  // Creates the home and every missing subdirectory (what writing commands need).
  static Status Open(const std::string& root, Home* home);
  // Only resolves the path: creates nothing, so that reads work on a home this process may not write.
  static Status Locate(const std::string& root, Home* home);

  const std::string& root() const { return root_; }
  std::string writer() const { return root_ + "/writer"; }
  std::string receive() const { return root_ + "/receive"; }
  std::string staging() const { return root_ + "/staging"; }
  std::string merging() const { return root_ + "/merging"; }
  std::string shards() const { return root_ + "/shards"; }
  std::string snapshots() const { return root_ + "/snapshots"; }
  std::string outgoing() const { return root_ + "/outgoing"; }
  std::string retained() const { return root_ + "/retained"; }
  std::string ShardPath(const std::string& map) const { return shards() + "/" + map; }
  // The subdirectories above, in that order.
  std::vector<std::string> Directories() const;

 private:
  // An error when one of the subdirectories exists as a symlink or as anything but a directory.
  Status RefuseLinkedDirectories() const;

  std::string root_;
};

}  // namespace planb
