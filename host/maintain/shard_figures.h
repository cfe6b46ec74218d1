// What `planb stores` and a node's metrics show of a map's shard, read in one go: its space (shard_space.h), its
// content version and its maintenance marks, all from one read transaction's state.
#pragma once

#include <string>

#include "host/maintain/maintenance_marks.h"
#include "host/runtime.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_space.h"
#include "planb/status.h"

namespace planb {

struct ShardFigures {
  ShardSpace space;
  ContentVersion version;
  MaintenanceMarks marks;
};

// kNotFound when nothing was merged into `map` on this node (no shard); other errors name the shard's path.
Status MeasureShardFigures(Runtime& runtime, const std::string& map, ShardFigures* out);

}  // namespace planb
