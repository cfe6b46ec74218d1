#include "support/test_env.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace planb::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "planb-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& contents) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool DropPrivilegesTo(uid_t uid) {
  if (uid == ::geteuid()) return true;
  return ::setgroups(0, nullptr) == 0 && ::setgid(uid) == 0 && ::setuid(uid) == 0;
}

ProcessResult RunProcess(const ProcessSpec& spec) {
  TempDir capture;
  const std::string in_path = spec.stdin_text ? capture / "stdin" : std::string("/dev/null");
  const std::string out_path = capture / "stdout";
  const std::string err_path = capture / "stderr";
  if (spec.stdin_text) WriteFile(in_path, *spec.stdin_text);
  std::vector<std::string> words{spec.binary};
  words.insert(words.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // The capture files are opened before dropping to spec.uid, which may not write the test's directory.
    const int in = ::open(in_path.c_str(), O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(127);
    if (spec.uid && !DropPrivilegesTo(*spec.uid)) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const int fd : spec.closed) ::close(fd);
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) ::_exit(127);
    ::execv(spec.binary.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  ProcessResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

ProcessResult RunPlanb(const std::vector<std::string>& args, const std::string& cwd) {
  ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = args;
  spec.cwd = cwd;
  return RunProcess(spec);
}

int TestTimeScale() {
  static const int scale = [] {
    const char* text = std::getenv("PLANB_TEST_TIME_SCALE");
    const int value = text == nullptr ? 1 : std::atoi(text);
    return value >= 1 ? value : 1;
  }();
  return scale;
}

std::string SharedDataDir() {
  const char* env = std::getenv("PLANB_SHARED_DATA");
  std::string dir = env != nullptr ? env : PLANB_SHARED_DATA_DIR;
  std::error_code ec;
  return fs::is_directory(dir, ec) ? fs::canonical(dir, ec).string() : "";
}

}  // namespace planb::testing
