// Shared test helpers: temporary directories, files, and running the real planb binary.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace planb::testing {

// The plugins built with planb: the store types state, temporal, ranged, temporal_ranged, session, histogram,
// metric, and the key schemes hashed, direct, hybrid, lookup_table and variable.
inline constexpr size_t kBuiltInPlugins = 12;

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

// How to run a child process: its program, where, what it reads, and as whom.
struct ProcessSpec {
  std::string binary;
  std::vector<std::string> args;
  std::string cwd;                 // "" = the current directory
  std::optional<std::string> stdin_text;  // absent: /dev/null
  std::optional<uid_t> uid;        // run as this user (and its gid as group); REQUIRES root
  std::vector<int> closed;         // descriptors the program starts without (1, 2: what it prints is lost)
};

// In a forked child: become `uid` (its gid as group, no supplementary groups) unless it is already this process's
// user; false when that fails (REQUIRES root otherwise).
bool DropPrivilegesTo(uid_t uid);

// Runs `spec` (no shell), waits for it and returns its exit status, stdout and stderr.
ProcessResult RunProcess(const ProcessSpec& spec);

// Runs the built planb with `args` (no shell), in directory `cwd` ("" = current), and waits for it.
ProcessResult RunPlanb(const std::vector<std::string>& args, const std::string& cwd = "");

// The test data set directory ../shared/data when present, else "".
std::string SharedDataDir();

// How much longer than usual waits on a condition may take: $PLANB_TEST_TIME_SCALE (a whole number >= 1; the
// sanitizer passes set it, scripts/sanitize.sh), else 1. WaitUntil's deadlines are multiplied by it.
int TestTimeScale();

}  // namespace planb::testing
