// Judging the storage nodes' answers to a load's or a deletion's PREPARE (load_check.h, BatchDelivery::Check)
// before anything is staged: one rule for both, so that write_quorum means the same for a deletion as for a load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host/ingest/batch_delivery.h"
#include "planb/status.h"

namespace planb {

// OK when no node that answered refuses (no room, an unknown map, a shard that does not open: it could not take
// the batch later either) and at least `quorum` nodes answered; a node that did not answer is left to catch-up.
// Otherwise kInvalidArgument "the storage nodes cannot take this <what>, so nothing was staged on any node (N
// problem(s)):" and a line per problem. `versions` (may be null) gets each answering node's batch count per map.
// A map held back behind a quarantined batch (PrepareVerdict::kHeldBack) is a problem too, unless `held_back` is
// given (load --no-wait: the batch is to be staged behind it): it then gets one "NODE: message" line per such map.
// `held_back_hint`, when not empty, ends a refusal that a held-back map is part of (how to stage anyway).
Status JudgeNodeChecks(const std::vector<NodeCheck>& checks, size_t quorum, const std::string& what,
                       std::map<std::string, std::map<std::string, uint64_t>>* versions,
                       std::vector<std::string>* held_back = nullptr, const std::string& held_back_hint = "");

}  // namespace planb
