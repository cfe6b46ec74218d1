// How long a merged batch stays recognisable, at the least: a policy both the config (ClusterConfig::
// MergedBatchesKeepMs, which also honours batch_retention) and the shards' record of merged batches
// (host/storage/content_version.h) read. A batch comes again only while it is staged or quarantined (kept whatever
// its age) or when a sender retries an upload, which it gives up long before a week.
#pragma once

#include <cstdint>

namespace planb {

inline constexpr int64_t kMergedBatchesKeepMs = int64_t{7} * 24 * 60 * 60 * 1000;

}  // namespace planb
