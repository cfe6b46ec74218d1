// The checks of one LMDB map file that came from outside (lmdb_verifier.h runs them in a forked child: a
// corrupt file may crash them, which is then the verdict). Not for files this process trusts: they read every page.
#pragma once

#include <memory>
#include <string>

#include "host/plugin_host/map_plugins.h"
#include "planb/status.h"

namespace planb {

// The LMDB file `dir`/data.mdb on its own: it opens read-only; its size covers every page the meta says it uses;
// a walk of every table (the main table and each named table) reads every row and matches the tables' counts;
// and a walk of the pages themselves from the meta's roots finds every branch, leaf and overflow page of every
// table and of the free list's own tree inside the file, each reached once, and every page number the free list
// (FREE_DBI) lists inside the file, listed once and not in use by any table. (A free list naming a live page
// makes LMDB's next write transaction hand that page out twice: an assertion in mdb_page_touch, or a shard
// silently overwriting itself.) kCorruption naming what is wrong; kIOError for the local disk.
Status CheckLmdbFile(const std::string& dir);

// CheckLmdbFile, then the meta and tables `plugins` expect, then every data row through the store type's decoder.
Status CheckMap(const std::string& dir, const std::shared_ptr<const MapPlugins>& plugins);

}  // namespace planb
