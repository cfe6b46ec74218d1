// Checks LMDB map files that came from outside this process (an uploaded batch, a fetched snapshot) before
// anything reads them for real: every map known to `catalog`, and every map's LMDB file sound (lmdb_check.h: it
// opens with the meta this node expects, its size covers every page, every table and the free list are walked
// page by page, every data row decodes by the store type's rules).
// The checks run in a child process, the program planb-verify (verifier_child.h), because LMDB trusts its file: a
// corrupt page may crash the reader instead of returning MDB_CORRUPTED, or send it round a loop. A child killed by
// a signal means a corrupt file, not a dead node; a child that outlives its deadline is killed and the file judged
// corrupt too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/plugin_host/map_catalog.h"
#include "planb/status.h"

namespace planb {

struct VerifyOptions {
  // The child's time limit: this plus 1 s per 16 MiB of extracted data. A sound batch is read in well under a
  // second per 16 MiB; only a corrupt B-tree (a loop of branch pages) keeps the walk going past it.
  // It counts from the child's start: from its first report, once its process is up.
  int64_t base_deadline_ms = 30000;
  // The child's time to start (exec, dynamic linking) before it reports its first map. Past it the child is killed
  // and the batch gets no verdict (kInternal), for a start slowed by a loaded machine says nothing about the files.
  int64_t start_deadline_ms = 30000;
  // The verifier program; empty: VerifierProgramPath().
  std::string program;
};

// The verifier program installed or built with this code: <libdir>/planb/planb-verify, beside the plugin directory
// (PluginRegistry::DefaultDirectory()).
inline constexpr const char* kVerifierProgramName = "planb-verify";
std::string VerifierProgramPath();

// Verifies `maps`, each at `dir`/<map>/data.mdb (as UnzipBatch extracted them; the files stay), against
// `catalog`. Errors name `zip_path` (the zip `dir` came from) and the map: kInvalidArgument (unknown map, meta
// mismatch), kCorruption (corrupt LMDB, a row that does not decode, an unusable map size, the deadline),
// kIOError/kFull (local disk), kInternal (the verifier could not start, or not within its start deadline, or could
// not load the map's plugins, or ended without a verdict: no verdict on the files).
// Safe to call from a multi-threaded process: the child is a new program (posix_spawn) that inherits no descriptor
// but its report pipe. Blocks until the child ends or its deadline.
Status VerifyExtractedBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& dir,
                            const std::vector<std::string>& maps, const VerifyOptions& options = VerifyOptions());

}  // namespace planb
