// The checks a load makes before it stages anything (PREPARE, docs/protocol.md), on the node that will merge:
// each map is configured here, its shard opens, and the shard's used size plus what the load adds fits in the
// map's max_store_size; and the disk has room for the batches. A storage node answers PREPARE with it; a single
// node runs it on itself. It reserves nothing: a load racing another may still find the map full at merge time.
// Thread-safety: as Runtime::OpenShard (any thread).
#pragma once

#include <cstdint>

#include "host/runtime.h"
#include "host/transfer/protocol.h"

namespace planb {

// The estimate of the room a merge of `bytes` of batch LMDB needs in the shard: more than the bytes themselves,
// since rows merged into existing pages split them and the write transaction cannot reuse pages it freed.
uint64_t MergeRoomNeeded(uint64_t bytes);

// Fills one answer per map of `request`, in order (see protocol::PrepareVerdict). Errors only for a request that
// cannot be judged at all (none so far: every problem is a verdict of its map).
Status CheckLoadLocally(Runtime& runtime, const protocol::PrepareRequest& request, protocol::PrepareReply* reply);

}  // namespace planb
