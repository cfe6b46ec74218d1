#include "host/storage/env_cache.h"

namespace planb {

Status EnvCache::Get(const std::string& path, std::shared_ptr<const MapPlugins> plugins,
                     std::shared_ptr<MapEnv>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = envs_.find(path);
  if (it != envs_.end()) {
    if (!it->second->Replaced()) {
      *out = it->second;
      return Status::Ok();
    }
    envs_.erase(it);  // the old files stay open for those still holding them
  }
  // Opening under the lock is what keeps two threads from opening one environment twice.
  std::shared_ptr<MapEnv> env;
  const unsigned flags = read_only_ ? MapEnv::kShardFlags | MDB_RDONLY : MapEnv::kShardFlags;
  PLANB_RETURN_IF_ERROR(MapEnv::Open(path, std::move(plugins), MapEnv::Mode::kOpenExisting, flags, &env));
  envs_[path] = env;
  *out = std::move(env);
  return Status::Ok();
}

void EnvCache::Put(std::shared_ptr<MapEnv> env) {
  std::lock_guard<std::mutex> lock(mutex_);
  envs_[env->path()] = std::move(env);
}

void EnvCache::Forget(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  envs_.erase(path);
}

size_t EnvCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return envs_.size();
}

}  // namespace planb
