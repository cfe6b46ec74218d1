// A received batch zip (host/ingest/batch_verifier.h): the bytes as a zip on a temp path, then VerifyBatch as a
// storage node runs it on an upload (the zip's rules, extraction with delete entries allowed, every map's LMDB
// file checked in a forked child, every delete entry parsed against its map's fields), against a catalog with
// one map per built-in store type. Any verdict is fine; a crash, a leak or UB is not, nor a scratch dir left.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "host/ingest/batch_verifier.h"
#include "host/transfer/batch_zip.h"

// Loads the plugins before the first input, so that libFuzzer sees their coverage counters from the start.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)planb::fuzz::Catalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const planb::MapCatalog& catalog = planb::fuzz::Catalog();
  const std::string zip = planb::fuzz::ScratchDir() + "/batch.zip";
  const std::string scratch = planb::fuzz::ScratchDir() + "/verify";
  planb::fuzz::WriteFileOrDie(zip, data, size);
  planb::UnzipLimits limits;
  limits.max_total_bytes = uint64_t{256} << 20;  // what a node would take is config; keep the fuzzer's disk small
  limits.min_free_bytes = 0;
  limits.sync = false;
  limits.allow_deletes = true;
  planb::VerifyOptions options;
  options.base_deadline_ms = 5000;
  (void)planb::VerifyBatch(catalog, zip, scratch, limits, options);
  struct stat st;
  planb::fuzz::Check(::stat(scratch.c_str(), &st) != 0, "VerifyBatch left its scratch directory behind");
  return 0;
}
