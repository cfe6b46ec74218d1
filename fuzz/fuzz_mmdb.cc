// A MaxMind DB file for `planb load --format mmdb` (host/ingest/mmdb_networks.h): opened through libmaxminddb and
// walked network by network. Whatever the bytes: no crash, no UB, no endless walk; networks come in address
// order within their family, every record is one JSON value, and every record read can be written back by
// `planb export` (mmdb_data_encoder.h), so what loads always exports.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "fuzz/fuzz_support.h"
#include "host/common/json_value_check.h"
#include "host/export/mmdb_data_encoder.h"
#include "host/ingest/mmdb_networks.h"

// libmaxminddb 1.7.1 (Debian 12) leaks a data pool in MMDB_open when a file's metadata languages array does not
// decode (populate_languages_metadata keeps the list MMDB_get_entry_data_list hands back on error; fixed
// upstream by libmaxminddb pull request 356). That is the library's, once per refused file, out of our reach:
// only leaks under MMDB_open are ignored; one anywhere else is still a finding. The library has no frame pointers,
// so allocations are unwound the slow way: the fast unwinder stops inside it and never sees MMDB_open.
extern "C" const char* __lsan_default_suppressions() { return "leak:MMDB_open\n"; }
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = planb::fuzz::ScratchDir() + "/input.mmdb";
  planb::fuzz::WriteFileOrDie(path, data, size);
  planb::MmdbLimits limits;
  limits.max_networks = 100000;  // bounded work per input; the limit itself is part of what is checked
  std::unique_ptr<planb::MmdbFile> file;
  if (!planb::MmdbFile::Open(path, limits, &file).ok()) return 0;
  planb::JsonValueCheck json_check;
  std::string why, encoded;
  bool have_previous = false;
  planb::MmdbNetwork previous;
  uint64_t networks = 0;
  (void)file->ForEachNetwork([&](const planb::MmdbNetwork& n) {
    planb::fuzz::Check(++networks <= limits.max_networks, "more networks than max_networks");
    planb::fuzz::Check(n.prefix_len <= (n.ipv6 ? 128 : 32), "a prefix longer than the address");
    planb::fuzz::Check(std::memcmp(n.first.data(), n.last.data(), 16) <= 0, "a network ends before it starts");
    if (have_previous && previous.ipv6 == n.ipv6) {
      planb::fuzz::Check(std::memcmp(previous.last.data(), n.first.data(), 16) < 0, "networks out of order");
    }
    planb::fuzz::Check(json_check.Check(n.record_json, &why), "a record that is not one JSON value");
    encoded.clear();
    planb::fuzz::Check(planb::AppendMmdbJson(n.record_json, &encoded).ok(), "a loaded record that cannot export");
    previous = n;
    have_previous = true;
    return planb::Status::Ok();
  });
  return 0;
}
