// A snapshot diff as it travels (SNAPSHOT_SINCE, docs/protocol.md): the batches a storage node merged into one
// map's shard since a reader's snapshot, each as a batch zip (batch_zip.h) holding only that map, in one file.
//
// On-disk format (a text head, then the parts' bytes back to back):
//   planb-diff 1
//   map <map>
//   from <batches> <digest, 16 hex digits>     the version the reader holds (content_version.h)
//   to <batches> <digest>                      the version once every part is merged
//   part <bytes> <batch id>                    one line per part, in the order the node merged them
//   end
// The parts follow the head in that order; their sizes add up to the rest of the file exactly. The file's whole
// checksum travels in the offer (FETCH checks it); each part is then checked as any batch is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/storage/content_version.h"
#include "planb/status.h"

namespace planb {

inline constexpr int kDiffFormatVersion = 1;
// The most batches one diff carries: beyond that the reader is sent the whole snapshot.
inline constexpr size_t kMaxDiffBatches = 1024;

struct DiffHead {
  std::string map;
  ContentVersion from;
  ContentVersion to;
  std::vector<std::string> batch_ids;  // one per part, in merge order
};

// Writes the head and the part zips `parts` (one per head.batch_ids entry, same order) to `path` + ".tmp", then
// renames it to `path`. Not synced: a diff is a cache (outgoing/ is emptied when a node starts). On error nothing
// is left at either name.
Status WriteDiffFile(const std::string& path, const DiffHead& head, const std::vector<std::string>& parts);

// Reads the head of the diff at `path` and copies each part into `out_dir` (which must exist) as
// `<n>.zip`, n from 0; `part_paths` gets their paths in order. Refuses, naming the file and what is wrong: a head
// that is not this format (unknown version, a line out of place, an invalid map name or batch id, more than
// kMaxDiffBatches parts, none at all, a `to` with no more batches than `from` plus the parts), part sizes that do
// not add up to the file's size, parts above `max_total_bytes` together.
Status ReadDiffFile(const std::string& path, const std::string& out_dir, uint64_t max_total_bytes, DiffHead* head,
                    std::vector<std::string>* part_paths);

}  // namespace planb
