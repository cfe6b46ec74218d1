// A page-level walk of an LMDB file that came from outside (run by lmdb_check.h in the verifier's child): LMDB's
// own API reads rows but never says which pages hold them, so the free list cannot be checked against the tables
// through it. This reads the pages as liblmdb 0.9 lays them out (on-disk format of LMDB, not ours).
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

// `file` is the data.mdb of the environment `txn` reads (a read transaction on the meta with id `txnid`), whose
// pages 0..`pages`-1 of `page_size` bytes the file is known to hold. Walks the trees of the free list and the main
// table, and every named table in it, from the meta's roots: every page is inside the file, says its own number,
// is a branch, leaf or overflow page where one is expected and is reached once. Then reads the free list (FREE_DBI,
// through `txn`): every page number it lists is inside the file, listed once, and used by no tree.
// kCorruption naming the first problem; kIOError when the file cannot be mapped.
Status CheckPages(const std::string& file, MDB_txn* txn, uint64_t txnid, uint64_t pages, uint64_t page_size);

}  // namespace planb
