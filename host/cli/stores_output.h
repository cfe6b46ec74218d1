// `planb stores`' report, as the command gathers it (stores_command.cc), and its three formats:
// - table (the default): one line per map, then the merge queue's trouble and a reader's snapshots;
// - json: ONE JSON document (pretty-printed, as `kubectl get -o json` prints one List document, not one object per
//   line): {"maps": [one object per map], "quarantined": [...], "held": [...], "snapshots": [...] (readers)};
// - csv: a header row, then one RFC 4180 record per map (host/common/csv.h), absent figures as empty fields.
// The same facts in each; docs/maintenance.md lists the fields.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "host/common/disk_room.h"
#include "host/ingest/quarantine.h"
#include "host/snapshot/snapshot_manager.h"
#include "host/storage/content_version.h"

namespace planb {

enum class StoresFormat { kTable, kJson, kCsv };

// "table", "json", "csv"; false for anything else.
bool ParseStoresFormat(const std::string& text, StoresFormat* out);

// One map as this node holds it; absent figures: nothing merged yet (or never maintained).
struct StoreInfo {
  std::string map, type, scheme;
  bool failed = false;  // the shard could not be measured (its error went to stderr)
  // Why the map cannot be used at all (a plugin it needs did not load); empty when it can.
  std::string unavailable;
  std::optional<uint64_t> rows, bytes;
  std::optional<double> free_share;  // of the shard's file (what disk reclaim compares, docs/maintenance.md)
  uint64_t max_store_size = 0;       // the map's, from the config
  // The share of max_store_size not yet used: 1 - (the shard's last page + 1) x page size / max_store_size, as a
  // load's room check counts it (load_check.h).
  std::optional<double> room_share;
  std::optional<ContentVersion> version;
  std::optional<int64_t> condensed_ms, reclaimed_ms;
  uint64_t staged = 0;       // batches in staging/ that touch the map (held ones too)
  uint64_t quarantined = 0;  // batches in quarantine/ that touch the map (or whose maps are unknown)
  uint64_t held = 0;         // staged batches of the map held back behind a quarantined one
  // The read index a Reader keeps of the map (docs/performance.md): the bytes it takes for the shard as it is now
  // (absent: none), and otherwise why none: "off" (read_index_max_size = 0), "over" (past it), "-" (no data, or a
  // type without one). read_index_max_size: the map's, for types that can have one.
  std::optional<uint64_t> read_index_bytes;
  std::string read_index_note = "-";
  std::optional<uint64_t> read_index_max_size;
};

struct StoresReport {
  std::vector<StoreInfo> maps;
  std::vector<QuarantinedBatch> quarantined;
  std::vector<HeldBatch> held;
  std::optional<std::vector<SnapshotInfo>> snapshots;  // a reader's; absent on a storage node
  std::string quarantine_dir;                          // where `quarantined` are
  std::string home;                                    // the node's home, whose filesystem `disk` measures
  DiskRoom disk;  // free bytes there and the margin loads keep free (disk_room.h); known false: statvfs failed
  std::vector<std::string> release_hints;              // per quarantined batch: QuarantineReleaseHint
};

void PrintStoresTable(const StoresReport& report, std::ostream& out);
void PrintStoresJson(const StoresReport& report, std::ostream& out);
void PrintStoresCsv(const StoresReport& report, std::ostream& out);

}  // namespace planb
