// Maintenance of one shard's rows (the design's "Condensation" and "Data Retention"): the store type's
// Store::Maintain for what the map's config asks (condense, condense_after, retain_for), then the key scheme's
// sweep of keys left without rows, in one write transaction of the shard, which also records when it ran
// (maintenance_marks.h). A dry run does the same work and aborts the transaction, so what it reports is exactly
// what a real run would remove.
#pragma once

#include <cstdint>

#include "host/config/config.h"
#include "host/storage/map_env.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

struct RowsMaintenance {
  bool asked = false;  // the map's config asks for condensation or retention
  MaintainStats stats;
  uint64_t keys_swept = 0;  // keys the scheme forgot (lookup tables)
};

// What the config asks of the rows at `now_ms`: cut-offs are now - condense_after and now - retain_for
// (saturating at the smallest time). `asked` false when it asks for nothing.
MaintainRequest RowsRequest(const MapConfig& config, int64_t now_ms, bool* asked);

// Applies the map's condensation and retention to `shard` at `now_ms`. REQUIRES: no other write transaction of
// the shard runs meanwhile (the caller holds the merge lock). Errors name the shard.
Status MaintainShardRows(const MapEnv& shard, int64_t now_ms, bool dry_run, RowsMaintenance* out);

}  // namespace planb
