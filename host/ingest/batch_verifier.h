// Checks a received batch zip before it may be staged, so that a bad upload is refused to its sender instead of
// blocking this node's merge queue: the zip's rules (batch_zip.h, with the node's size limits), every map known
// to this node's config, and every map's LMDB file sound: it opens with the meta this node expects (store type,
// scheme, layout), its size covers every page LMDB says it uses, and a walk of every table reads every row.
// The LMDB checks run in a forked child, because LMDB trusts its file: a corrupt page may crash the reader
// instead of returning MDB_CORRUPTED. A child killed by a signal means a corrupt file, not a dead node.
#pragma once

#include <string>

#include "host/runtime.h"
#include "host/transfer/batch_zip.h"

namespace planb {

// Extracts `zip_path` into `scratch_dir` (must not exist; removed again before returning) and verifies it.
// An existing scratch_dir is refused (kInvalidArgument) and left alone: clear leftovers of a crash at start-up.
// Forks; safe to call from a multi-threaded process (the child runs only LMDB and plain code, then _exit).
// Errors name the zip and the map: kInvalidArgument (rules, unknown map, meta mismatch), kCorruption (corrupt
// LMDB, CRC), kIOError/kFull (local disk).
Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits);

}  // namespace planb
