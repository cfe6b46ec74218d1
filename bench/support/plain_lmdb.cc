#include "support/plain_lmdb.h"

#include <algorithm>
#include <cstdint>

#include "planb/lmdb.h"
#include "support/shard_setup.h"

namespace planb::bench {

void WritePlainLmdb(const std::string& path, KeyValues pairs) {
  std::sort(pairs.begin(), pairs.end());
  uint64_t bytes = 0;
  for (const auto& [k, v] : pairs) bytes += k.size() + v.size() + 16;
  Env::Options options;
  options.flags = MDB_NOSUBDIR | MDB_NOSYNC;
  options.map_size = bytes * 2 + (uint64_t{64} << 20);
  Env env;
  CheckSetup(env.Open(path, options));
  Txn txn;
  CheckSetup(txn.Begin(env.get(), 0));
  MDB_dbi dbi = 0;
  CheckSetup(txn.OpenDbi(nullptr, MDB_CREATE, &dbi));
  for (const auto& [k, v] : pairs) {
    MDB_val key{k.size(), const_cast<char*>(k.data())};
    MDB_val value{v.size(), const_cast<char*>(v.data())};
    const int rc = mdb_put(txn.get(), dbi, &key, &value, MDB_APPEND);
    if (rc != MDB_SUCCESS) CheckSetup(Status::IOError(path + ": plain LMDB append: " + mdb_strerror(rc)));
  }
  CheckSetup(txn.Commit());
}

}  // namespace planb::bench
