// A batch as it travels and waits in staging/: one zip holding a stream's maps (libzip).
//
// On-disk format (bump kBatchFormatVersion on any change):
//   planb-batch        first entry; text "planb-batch 3\nid <batch id>\n": the format version, then the id that
//                      names the batch on every node (the shard's content version counts batches by it, see
//                      host/storage/content_version.h). Version 1 (no id) is refused: its batches cannot be counted.
//                      Version 2 (the same, without delete entries) is still read, and written for a batch without
//                      delete entries, so that nodes and readers not yet upgraded take loads and snapshots.
//   <map>/data.mdb     one LMDB data file per map, <map> a valid map name (lower case, see IsValidMapName)
//   <map>/delete       (version 3) a deletion: which rows of <map> go (host/transfer/delete_entry.h), at most
//                      kMaxDeleteEntryBytes. A map has data.mdb or delete in one batch, never both.
// Version 4 adds one optional manifest line after the id, "replace": the batch's rows become the whole content of
// every map it holds (`planb load --replace`); such a batch holds data only, no delete entry. A version 4
// manifest is written only for a replacement, so a node that reads up to version 3 refuses it rather than merge
// it as an ordinary load.
// Version 5: a delete entry starts with its time (delete_entry.h), so that deletions commute with loads; delete
// entries of versions 3 and 4 (no time) are refused, as are delete entries in a replacement.
// Nothing else is allowed: no lock.mdb, no directories entries needed, no other names.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "host/common/disk_room.h"
#include "planb/status.h"

namespace planb {

inline constexpr int kBatchFormatVersion = 5;
inline constexpr int kReplaceBatchFormatVersion = 4;  // written for a replacement (manifest line "replace")
inline constexpr int kDeleteBatchFormatVersion = 5;   // written for a batch with delete entries (their time)
inline constexpr int kOldestBatchFormatRead = 2;
inline constexpr const char* kBatchManifestName = "planb-batch";

struct ZipOptions {
  // Deflate (level 1: fast; LMDB pages compress well) for batches that cross the network; stored as they are
  // when the zip only moves on this machine.
  bool compress = true;
  // Required: what the manifest's `id` line says, e.g. "content:0123...ef" (see IsValidBatchId).
  std::string batch_id;
  // The manifest says "replace" (version 4): the batch's maps are replaced by its rows when it merges.
  bool replace = false;
  // Synced to disk before its name is published (fsync of the file and its directory). Off only for zips that
  // are a cache no restart reads (snapshot zips: outgoing/ is emptied when a node starts), where the sync would
  // cost as much as the rest of the work and protect nothing.
  bool durable = true;
};

// A batch id is 1 to kMaxBatchIdBytes bytes without control characters (it is one manifest line and an LMDB key).
inline constexpr size_t kMaxBatchIdBytes = 511;
bool IsValidBatchId(std::string_view id);

// Zips every `<map>/data.mdb` (or `<map>/delete`, a deletion batch) under `batch_dir` (a finished StreamWriter
// directory) into `zip_path`, written to `zip_path + ".tmp"`, fsynced (options.durable), then renamed. A directory
// under batch_dir without data.mdb or delete (or with both) is an error, and so is anything UnzipBatch would refuse (a
// plain file, a directory that is not a valid map name). Other files in a map directory (lock.mdb) are left out. Maps
// are zipped in name order. An invalid options.batch_id is kInvalidArgument naming it (and the batch directory);
// nothing is written then.
Status ZipBatch(const std::string& batch_dir, const std::string& zip_path, const ZipOptions& options);

// Zips one map's data.mdb, read from `data_fd` to its end (a pipe another thread writes an LMDB copy into), into
// `zip_path` as ZipBatch zips a batch directory that holds only `map`: the same manifest, temp name, sync and
// rename. `data_fd` is always read to its end, on errors too, so that its writer finishes; the caller closes it.
// The entry's sizes follow its data (fd_zip_source.h). Errors as ZipBatch's, and kInvalidArgument for an invalid
// map name or options.replace (a stream is one map's whole data, never a replacement).
Status ZipMapStream(const std::string& map, int data_fd, const std::string& zip_path, const ZipOptions& options);

struct UnzipLimits {
  uint64_t max_total_bytes = uint64_t{64} << 30;  // sum of declared uncompressed sizes (zip bombs)
  uint64_t max_entries = 10000;
  // What an extraction must leave free on its filesystem: max(this, 1% of the filesystem).
  uint64_t min_free_bytes = kDefaultMinFreeBytes;
  // fsync the extracted files and directories. False only for scratch that a crash may lose because it is
  // extracted again from the zip (the merge's merging/): saves writing the batch to disk only to delete it.
  bool sync = true;
  // Admit `<map>/delete` entries (deletion batches: staging, merging, verifying uploads). Snapshots never hold
  // one, so their readers leave this false and such a zip is refused.
  bool allow_deletes = false;
  // When set, asked for each entry's map once the zip's directory has passed the checks and before a byte is
  // inflated: an error refuses the zip (a storage node refuses a client's maps it may not write before unzipping
  // them, so a small zip declaring another map cannot make it inflate gigabytes first).
  std::function<Status(const std::string& map)> admit_map = {};
};

// Checks and extracts `zip_path` into `dest_dir` (created; must not exist yet), giving `<dest_dir>/<map>/data.mdb` (or
// `<dest_dir>/<map>/delete`, when limits.allow_deletes; HasDeleteEntry tells them apart) per map, fsynced (unless
// !limits.sync). Refuses, naming the zip and the entry, before writing anything: not a zip / unreadable, a missing or
// unknown-version manifest (version 1, from an older planb, included), a version 2 or 3 manifest without a valid `id`
// line, an entry name that is not exactly `<valid map>/data.mdb` or `<valid map>/delete` (absolute paths, `..`,
// backslashes, anything else), a delete entry that is unreadable (ParseDeleteEntry), too big, in a version 2 batch or
// not allowed, a map twice (both entries included), more entries or more declared bytes than `limits`.
// Refused too (kFull "not enough disk ...", nothing written) when the declared sizes would leave less than
// max(limits.min_free_bytes, 1% of the filesystem) free where dest_dir is made.
// While extracting, an entry that inflates past its declared size or fails its CRC is an error too. On any
// error dest_dir is removed (an existing dest_dir is refused, kInvalidArgument, and left alone; missing parents of
// dest_dir are created). `maps` gets the map names in entry order, `batch_id` (when not null) the manifest's id.
// Errors: kInvalidArgument for a zip that breaks the rules, kCorruption for CRC/inflate failures and
// truncated zips, kIOError / kFull (ENOSPC) for the local disk.
// The manifest id of `zip_path` (and, when `maps` is not null, its map names in entry order), after the checks
// UnzipBatch makes before extracting (nothing is extracted).
Status ReadBatchId(const std::string& zip_path, const UnzipLimits& limits, std::string* batch_id,
                   std::vector<std::string>* maps = nullptr);

// `replace` (when not null) gets whether the manifest says "replace" (version 4).
Status UnzipBatch(const std::string& zip_path, const std::string& dest_dir, const UnzipLimits& limits,
                  std::vector<std::string>* maps, std::string* batch_id = nullptr, bool* replace = nullptr);

}  // namespace planb
