// A copy of an LMDB environment with every page full: each table's rows written in key order with MDB_APPEND
// into a new environment. LMDB's own compacting copy (mdb_env_copy2 with MDB_CP_COMPACT) leaves out free pages
// but copies each page as it is, so rows deleted by condensation, retention or a deletion batch (LMDB merges a
// page only when it falls under a quarter full) and the half-full pages merges leave still cost their space in
// it; this copy is what reclaiming them needs.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

struct DenseCopyStats {
  uint64_t tables = 0;
  uint64_t rows = 0;
};

// Copies every named table of `from` (their flags kept: MDB_DUPSORT tables with MDB_APPENDDUP) into a new
// environment made in directory `to_dir` (which must exist and hold no data.mdb), as of one read transaction of
// `from`, in one write transaction (so the copy holds no free page), and syncs it. The new environment gets
// `from`'s map size. On error the partial copy is left for the caller to remove.
// REQUIRES: every table uses LMDB's default key order (Plan B's do); the main table holds only named tables.
Status DenseCopy(MDB_env* from, const std::string& to_dir, DenseCopyStats* stats);

}  // namespace planb
