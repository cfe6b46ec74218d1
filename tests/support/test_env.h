// Shared test helpers: temporary directories, files, and running the real planb binary.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace planb::testing {

// The plugins built with planb: the store types state, temporal, ranged, temporal_ranged, session, and the key
// schemes hashed and direct.
inline constexpr size_t kBuiltInPlugins = 7;

// A fresh directory under $TMPDIR, removed (with everything in it) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);

struct ProcessResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out;
  std::string err;
};

// Runs the built planb with `args` (no shell), in directory `cwd` ("" = current), and waits for it.
ProcessResult RunPlanb(const std::vector<std::string>& args, const std::string& cwd = "");

// The test data set directory ../shared/data when present, else "".
std::string SharedDataDir();

}  // namespace planb::testing
