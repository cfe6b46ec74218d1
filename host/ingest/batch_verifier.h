// Checks a received batch zip before it may be staged, so that a bad upload is refused to its sender instead of
// blocking this node's merge queue: the zip's rules (batch_zip.h, with the node's size limits), then every map's
// LMDB file in a forked child (host/storage/lmdb_verifier.h: known map, expected meta, every page and the free
// list sound, every row decodes), and every delete entry (a known map, an expression that parses against the
// fields of its type: a deletion this node could not merge is refused, not staged).
#pragma once

#include <string>

#include "host/plugin_host/map_catalog.h"
#include "host/runtime.h"
#include "host/storage/lmdb_verifier.h"
#include "host/transfer/batch_zip.h"

namespace planb {

// Extracts `zip_path` into `scratch_dir` (must not exist; removed again before returning) and verifies it.
// An existing scratch_dir is refused (kInvalidArgument) and left alone: clear leftovers of a crash at start-up.
// Errors name the zip and the map: kInvalidArgument (rules, unknown map, meta mismatch), kCorruption (corrupt
// LMDB, a row that does not decode, an unusable map size, CRC, the deadline), kIOError/kFull (local disk).
// A batch naming a map outside `scope` (the sender's client may not upload to it) is refused with
// kPermissionDenied "not authorised for upload on MAP" before its files are verified.
Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options = VerifyOptions(),
                   const MapScope& scope = std::nullopt);
// The same against `catalog` alone (the maps this process knows; what VerifyBatch takes from the runtime).
Status VerifyBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options = VerifyOptions(),
                   const MapScope& scope = std::nullopt);

}  // namespace planb
