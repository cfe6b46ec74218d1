#include "host/ingest/batch_verifier.h"

#include <sys/stat.h>

#include <vector>

#include "host/common/file_util.h"

namespace planb {

Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options) {
  return VerifyBatch(runtime.catalog(), zip_path, scratch_dir, limits, options);
}

Status VerifyBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options) {
  struct stat st;
  if (::lstat(scratch_dir.c_str(), &st) == 0) {
    // Not ours: never removed. A crashed verifier's leftovers are for the caller to clear at start-up.
    return Status::Invalid(scratch_dir + ": already exists (verifying " + zip_path + ")");
  }
  std::vector<std::string> maps;
  // Scratch, removed below whatever happens: a crash loses nothing the zip cannot give again, so no fsync.
  UnzipLimits scratch_limits = limits;
  scratch_limits.sync = false;
  Status s = UnzipBatch(zip_path, scratch_dir, scratch_limits, &maps);
  if (s.ok()) s = VerifyExtractedBatch(catalog, zip_path, scratch_dir, maps, options);
  Status removed = RemoveTree(scratch_dir);
  if (s.ok()) return removed;
  return s;
}

}  // namespace planb
