#include "host/catchup/batch_retention.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "host/common/file_util.h"

namespace planb {

namespace {

constexpr size_t kHashHexLength = 32;

bool IsRetainedName(const std::string& name) {
  if (name.size() != kHashHexLength + 4 || name.compare(kHashHexLength, 4, ".zip") != 0) return false;
  return std::all_of(name.begin(), name.begin() + kHashHexLength,
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

bool RetainsMergedBatches(const ClusterConfig& cluster) {
  return !cluster.single_node() && cluster.IsStorageNode() && cluster.batch_retention_ms > 0 &&
         cluster.batch_retention_bytes > 0;
}

std::string RetainedBatchPath(const Home& home, std::string_view batch_id) {
  const XXH128_hash_t hash = XXH3_128bits(batch_id.data(), batch_id.size());
  char name[kHashHexLength + 5];
  std::snprintf(name, sizeof name, "%016llx%016llx.zip", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return home.retained() + "/" + name;
}

Status RetainMergedBatch(const Home& home, const std::string& zip_path, std::string_view batch_id) {
  const std::string to = RetainedBatchPath(home, batch_id);
  // The staged zip's time is its arrival; retention counts from now. Stamped before the move: once it is in
  // retained/ a pruner may look at it.
  if (::utimensat(AT_FDCWD, zip_path.c_str(), nullptr, 0) != 0) {
    return Status::IOError("stamping " + zip_path + ": " + std::strerror(errno));
  }
  return DurableRename(zip_path, to);
}

Status PruneRetainedBatches(const Home& home, int64_t keep_ms, uint64_t keep_bytes, int64_t now_ms,
                            RetentionPruned* pruned) {
  *pruned = RetentionPruned();
  struct Retained {
    int64_t mtime_ms;
    uint64_t size;
    std::string path;
  };
  std::vector<Retained> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(home.retained(), ec)) {
    if (!IsRetainedName(entry.path().filename().string())) continue;
    struct stat st;
    // lstat: a symlink someone put here is not ours to follow, and not ours to count.
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    files.push_back({int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1000000, static_cast<uint64_t>(st.st_size),
                     entry.path().string()});
  }
  if (ec) return Status::IOError("listing " + home.retained() + ": " + ec.message());
  std::sort(files.begin(), files.end(), [](const Retained& a, const Retained& b) { return a.mtime_ms > b.mtime_ms; });
  uint64_t kept_bytes = 0;
  for (const Retained& file : files) {
    const bool young = now_ms - file.mtime_ms <= keep_ms;
    if (young && kept_bytes + file.size <= keep_bytes) {
      kept_bytes += file.size;
      continue;
    }
    if (::unlink(file.path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError("deleting " + file.path + ": " + std::strerror(errno));
    }
    ++pruned->files;
    pruned->bytes += file.size;
  }
  return Status::Ok();
}

}  // namespace planb
