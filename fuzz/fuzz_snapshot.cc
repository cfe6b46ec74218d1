// A fetched snapshot zip (host/snapshot: SnapshotManager's CheckZip): unpacked with delete entries refused, then
// every map's LMDB file verified in a forked child (VerifyExtractedBatch). Whatever the bytes, no crash, no UB,
// and a refused zip leaves nothing extracted.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "host/common/file_util.h"
#include "host/storage/lmdb_verifier.h"
#include "host/transfer/batch_zip.h"

// Loads the plugins before the first input, so that libFuzzer sees their coverage counters from the start.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)planb::fuzz::Catalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const planb::MapCatalog& catalog = planb::fuzz::Catalog();
  const std::string zip = planb::fuzz::ScratchDir() + "/snapshot.zip";
  const std::string dir = planb::fuzz::ScratchDir() + "/unpacked";
  planb::fuzz::WriteFileOrDie(zip, data, size);
  planb::UnzipLimits limits;
  limits.max_total_bytes = uint64_t{256} << 20;
  limits.min_free_bytes = 0;
  limits.sync = false;
  std::vector<std::string> maps;
  std::string batch_id;
  const planb::Status unzipped = planb::UnzipBatch(zip, dir, limits, &maps, &batch_id);
  struct stat st;
  if (!unzipped.ok()) {
    planb::fuzz::Check(::stat(dir.c_str(), &st) != 0, "a refused zip left its destination behind");
    return 0;
  }
  planb::fuzz::Check(planb::IsValidBatchId(batch_id), "an accepted zip has an invalid batch id");
  planb::VerifyOptions options;
  options.base_deadline_ms = 5000;
  (void)planb::VerifyExtractedBatch(catalog, zip, dir, maps, options);
  planb::fuzz::Check(planb::RemoveTree(dir).ok(), "cannot remove the unpacked snapshot");
  return 0;
}
