// A plain LMDB database of key -> value pairs, keys as text, as a user would write one by hand without Plan B:
// the raw baseline of the benches that compare a Plan B path with LMDB alone.
#pragma once

#include <string>

#include "support/bench_data.h"

namespace planb::bench {

// Writes every pair of `pairs` into `path` (one file, MDB_NOSUBDIR), in key order, appended (MDB_APPEND) in one
// transaction, into the unnamed database. Ends the bench on any error.
void WritePlainLmdb(const std::string& path, KeyValues pairs);

}  // namespace planb::bench
