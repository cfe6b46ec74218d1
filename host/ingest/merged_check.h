// Whether a batch is already merged on this node, asked before staging it again: a load retried after a failure
// sends the same batches (batch_ids.h), and a node that merged one answers "already merged" instead of staging a
// copy whose merge would change nothing (and the sender learns that the batch is in).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "host/runtime.h"

namespace planb {

// `*merged` is true when the shard of every map in `maps` records `batch_id` (content_version.h); false when
// `maps` is empty, a shard does not exist yet or one does not record it (a batch merged into some of its maps
// before a crash is staged again and completes). Safe beside a merge of the same shards in this process: it
// opens no table (MapEnv::batches). Errors name the shard.
Status IsMergedIntoEveryShard(Runtime& runtime, const std::vector<std::string>& maps, std::string_view batch_id,
                              bool* merged);

}  // namespace planb
