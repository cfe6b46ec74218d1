// Keeps map environments open between uses, one per path: LMDB allows a process to open an environment only
// once, and reopening per lookup would be slow. Entries are shared: an environment closes only when the cache
// has dropped it and nobody else holds it. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "host/storage/map_env.h"

namespace planb {

class EnvCache {
 public:
  // Reads only: environments open MDB_RDONLY (and MDB_NOLOCK where lock.mdb is not writable, map_env.h).
  // REQUIRES: called before the first Get.
  void set_read_only(bool read_only) { read_only_ = read_only; }
  // The open environment at `path`, opening it (kOpenExisting, shard flags) if needed. An entry whose files were
  // replaced since it opened (MapEnv::Replaced: a compacted shard swapped in) is dropped and the path opened again;
  // holders of the old entry keep it. Costs a stat per call: call it before each merge, not per lookup.
  Status Get(const std::string& path, std::shared_ptr<const MapPlugins> plugins, std::shared_ptr<MapEnv>* out);
  // Hands an environment opened elsewhere to the cache (e.g. a shard that was just created).
  void Put(std::shared_ptr<MapEnv> env);
  // Drops the cache's reference, e.g. before the files are moved or deleted.
  void Forget(const std::string& path);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<MapEnv>> envs_;
  bool read_only_ = false;
};

}  // namespace planb
