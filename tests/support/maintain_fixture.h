// Test helpers for maintenance (issue 14) on real map LMDBs, doing what the host's maintenance runner does, each
// in one write transaction: Store::Maintain then the scheme's SweepUnusedKeys; a scan deleting rows through
// Store::DeleteRow, then FinishDeletes and the sweep; and dumps of a plugin's own tables.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/storage/map_env.h"
#include "planb/store.h"

namespace planb::testing {

struct MaintainResult {
  MaintainStats stats;
  uint64_t keys_swept = 0;  // KeyScheme::SweepUnusedKeys' count (0 for types without a scheme)
};

// Store::Maintain over the whole shard, then the scheme's sweep; committed when both succeed.
Status RunMaintain(const std::shared_ptr<MapEnv>& env, const MaintainRequest& request, MaintainResult* result);

// Walks every row with the table's cursor (MDB_FIRST, MDB_NEXT) as the host's deletion scan does, calling
// Store::DeleteRow on each row `doomed` says yes to (the row decoded by the store type), then FinishDeletes and
// the scheme's sweep; committed when all succeed. `*deleted` counts the rows deleted.
Status DeleteRows(const std::shared_ptr<MapEnv>& env, const std::function<bool(const Row&)>& doomed, uint64_t* deleted,
                  uint64_t* keys_swept = nullptr);

using TableEntries = std::vector<std::pair<std::string, std::string>>;  // (LMDB key, value) in LMDB order

// Every entry of the map's scheme table number `index` (declared order), or of its store-type table when
// `store_table`.
Status DumpPluginTable(const MapEnv& env, uint32_t index, bool store_table, TableEntries* out);

// What the map's scheme tables must hold, checked against the rows its data table has: a lookup table's `ids`
// naming exactly the keys with rows in id form (under the ids their rows use) and an index with the same entries
// and dense clash numbers; value_dedup's tables holding exactly the values rows reference, with exact counts.
// Returns "" when all is exact, else what differs (one line each).
std::string SchemeTableProblems(const MapEnv& env);

}  // namespace planb::testing
