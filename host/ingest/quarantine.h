// quarantine/: staged batches whose merge failed, or killed the merging process, kMaxMergeAttempts times
// (merge_attempts.h counts them, deaths included). Failures of the node's own state (config, a shard that does not
// open, room to extract, the disk) are not counted: they say nothing about the batch; MDB_MAP_FULL while merging
// is (the batch does not fit the map).
// A quarantined batch keeps its name (quarantine/<N>.zip) beside "<N>.reason" (its maps and why, one line each).
//
// Order: batches merge oldest first, so a batch that touches a map of a quarantined batch is held back (staged,
// not merged) and so is every later batch touching a map of a held one (transitively); batches of other maps go
// on. An operator releases the maps by moving quarantine/<N>.zip back into staging/ (it merges first again, with
// fresh attempts) or by deleting it (the held batches then merge without it). See docs/storage-nodes.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host/ingest/merge_attempts.h"
#include "host/storage/home.h"
#include "planb/status.h"

namespace planb {

inline constexpr int kMaxMergeAttempts = 3;

std::string QuarantineDir(const Home& home);

// The maps a batch zip holds (its "<map>/data.mdb" and "<map>/delete" entries), read from the zip's directory
// without extracting.
Status ListBatchMaps(const std::string& zip_path, std::vector<std::string>* maps);

struct QuarantinedBatch {
  std::string name;                // "00000000000000000003.zip"
  std::vector<std::string> maps;   // empty with maps_known false: the zip could not be read, it blocks every map
  bool maps_known = false;
  std::string reason;
};

// Moves staged `zip_path` into quarantine/ (created when missing) with its reason file, durably, and drops its
// attempts file. `reason` is stored escaped and capped (one line); `out->reason` keeps it
// as given, for the caller's log line (which escapes it).
Status QuarantineBatch(const Home& home, const std::string& zip_path, const std::vector<std::string>& maps,
                       bool maps_known, const std::string& reason, QuarantinedBatch* out);
// Quarantined batches, oldest first; none when quarantine/ does not exist (nothing is created).
Status ListQuarantine(const Home& home, std::vector<QuarantinedBatch>* out);

// Which maps may not merge now, and why: those of quarantined batches and of batches held back behind them.
class MergeBlocks {
 public:
  // Blocks `maps` (every map when !maps_known) because of batch `by` (a file name).
  void Block(const std::vector<std::string>& maps, bool maps_known, const std::string& by);
  // Whether a batch touching `maps` (all maps when !maps_known) must wait; `*map` and `*by` then say why.
  bool Blocks(const std::vector<std::string>& maps, bool maps_known, std::string* map, std::string* by) const;
  // Blocked map -> the quarantined or failing batch at the root of the block ("*" for every map).
  const std::map<std::string, std::string>& blocked() const { return blocked_; }
  bool empty() const { return blocked_.empty(); }

 private:
  std::map<std::string, std::string> blocked_;
};

struct HeldBatch {
  uint64_t sequence = 0;
  std::string name;  // the staged batch held back
  std::string map;   // the blocked map it touches
  std::string by;    // the batch at the root of the block
};

// Quarantine and staging as they are now (for `planb stores` and a load's checks): the quarantined batches and
// the staged batches held back behind them; `blocks` (may be null) gets every map a new batch would be held back
// on, each with the quarantined batch at the root. Reads only; creates nothing.
Status InspectQuarantine(const Home& home, std::vector<QuarantinedBatch>* quarantined, std::vector<HeldBatch>* held,
                         MergeBlocks* blocks = nullptr);

// How an operator releases quarantined batch `name` (its file name in quarantine/), as docs/storage-nodes.md
// says: the two commands, with this home's paths ("to release it, fix its cause and move it back: mv ...").
std::string QuarantineReleaseHint(const Home& home, const std::string& name);

}  // namespace planb
