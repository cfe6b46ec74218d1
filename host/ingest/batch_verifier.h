// Checks a received batch zip before it may be staged, so that a bad upload is refused to its sender instead of
// blocking this node's merge queue: the zip's rules (batch_zip.h, with the node's size limits), every map known
// to this node's config, and every map's LMDB file sound: it opens with the meta this node expects (store type,
// scheme, layout), its size covers every page LMDB says it uses, a walk of every table reads every row, and every
// data row decodes by the store type's rules (Store::DecodeRow), as the merge will need it to.
// The LMDB checks run in a forked child, because LMDB trusts its file: a corrupt page may crash the reader
// instead of returning MDB_CORRUPTED, or send it round a loop. A child killed by a signal means a corrupt file,
// not a dead node; a child that outlives its deadline is killed and the file judged corrupt too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/plugin_host/map_catalog.h"
#include "host/runtime.h"
#include "host/transfer/batch_zip.h"

namespace planb {

struct VerifyOptions {
  // The child's time limit: this plus 1 s per 16 MiB of extracted data. A sound batch is read in well under a
  // second per 16 MiB; only a corrupt B-tree (a loop of branch pages) keeps the walk going past it.
  int64_t base_deadline_ms = 30000;
};

// Extracts `zip_path` into `scratch_dir` (must not exist; removed again before returning) and verifies it.
// An existing scratch_dir is refused (kInvalidArgument) and left alone: clear leftovers of a crash at start-up.
// Forks; safe to call from a multi-threaded process (the child closes every inherited descriptor but its pipe,
// runs only LMDB, the map's plugins and plain code, then _exit). Blocks until the child ends or its deadline.
// Errors name the zip and the map: kInvalidArgument (rules, unknown map, meta mismatch), kCorruption (corrupt
// LMDB, a row that does not decode, an unusable map size, CRC, the deadline), kIOError/kFull (local disk).
Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options = VerifyOptions());
// The same against `catalog` alone (the maps this process knows; what VerifyBatch takes from the runtime).
Status VerifyBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options = VerifyOptions());

// The checks after extraction, for a caller that keeps what it extracted (a fetched snapshot is verified where it
// was unpacked, then renamed into place): `maps` as UnzipBatch returned them, each at `dir`/<map>/data.mdb, which
// stays. Errors as VerifyBatch's, naming `zip_path` (the zip `dir` came from) and the map.
Status VerifyExtractedBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& dir,
                            const std::vector<std::string>& maps, const VerifyOptions& options = VerifyOptions());

}  // namespace planb
