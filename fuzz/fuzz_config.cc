// The INI config (host/config): ReadIni on any bytes, then ParseConfig (every section and key validated). Both
// must refuse or accept without a crash; what ReadIni accepts, ParseConfig must then judge without one either.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "host/config/config.h"
#include "host/config/ini_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<planb::IniSection> sections;
  const planb::Status read = planb::ReadIni("fuzz.ini", text, &sections);
  planb::fuzz::Check(read.ok() || !read.message().empty(), "ReadIni refused without saying why");
  planb::Config config;
  const planb::Status parsed = planb::ParseConfig("fuzz.ini", text, "/nonexistent-fuzz-base", &config);
  planb::fuzz::Check(parsed.ok() || !parsed.message().empty(), "ParseConfig refused without saying why");
  // ParseConfig reads the file with ReadIni first: it cannot accept what ReadIni refuses.
  planb::fuzz::Check(read.ok() || !parsed.ok(), "ParseConfig accepted text ReadIni refuses");
  return 0;
}
