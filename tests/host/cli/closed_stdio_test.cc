// A planb started with stdout and stderr closed (by a supervisor, or `planb load >&- 2>&-`) opens /dev/null on
// them before anything else: otherwise the next file it opened (a batch, a shard's data.mdb) would take
// descriptor 1 or 2, and what the command prints would be written into that file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using testing::ProcessSpec;
using testing::Ref;
using testing::ReferenceData;
using testing::RunProcess;
using testing::TestTimeScale;

// planb --home HOME --config CONFIG args..., started without descriptors 1 and 2.
ProcessResult RunWithoutStdoutAndStderr(const CliEnv& env, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = {"--home", env.home(), "--config", env.config()};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  spec.closed = {1, 2};
  return RunProcess(spec);
}

TEST(ClosedStandardDescriptors, LoadsAndLookupsLeaveTheShardsIntact) {
  CliEnv env;
  const std::string cities = env.Write(
      "cities.xml", ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" +
                                  Ref("city_to_country", "Zürich", "Schweiz") + "\n" +
                                  Ref("iptolocation", "10.0.0.1", "London HQ")));
  ProcessResult r = RunWithoutStdoutAndStderr(env, {"load", cities});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out + r.err, "");  // nowhere to print: the summary went to /dev/null, not into a file

  // A second load, of a file that breaks off, fails (its message lost) and changes nothing.
  const std::string whole = ReferenceData(Ref("city_to_country", "Paris", "Paris?"));
  const std::string broken = env.Write("broken.xml", whole.substr(0, whole.size() / 2));
  r = RunWithoutStdoutAndStderr(env, {"load", broken});
  EXPECT_NE(r.exit_code, 0);

  // Lookups without descriptors answer through their exit status: a hit, a miss.
  EXPECT_EQ(RunWithoutStdoutAndStderr(env, {"lookup", "city_to_country", "Zürich"}).exit_code, 0);
  EXPECT_EQ(RunWithoutStdoutAndStderr(env, {"lookup", "city_to_country", "Atlantis"}).exit_code, 1);

  // Read back normally: every row as loaded, so no line was written into a shard.
  struct Row {
    const char* map;
    const char* key;
    const char* value;
  };
  for (const auto& [map, key, value] : {Row{"city_to_country", "Paris", "France"},
                                        Row{"city_to_country", "Zürich", "Schweiz"},
                                        Row{"iptolocation", "10.0.0.1", "London HQ"}}) {
    r = env.Lookup(map, key);
    EXPECT_EQ(r.exit_code, 0) << key << ": " << r.err;
    EXPECT_EQ(r.out, std::string(value) + "\n") << key;
  }
  r = env.Run({"query", "city_to_country"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// While planb runs, its descriptors 1 and 2 are /dev/null. Seen from outside: `lookup --keys-from FIFO` holds
// planb inside the command (past main) until the test opens the named pipe to write the keys.
TEST(ClosedStandardDescriptors, AreDevNullWhileTheCommandRuns) {
  CliEnv env;
  const std::string cities = env.Write("cities.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  ASSERT_EQ(env.Load({cities}).exit_code, 0);
  const std::string fifo = env.dir() + "/keys";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);

  std::vector<std::string> words = {PLANB_BINARY, "--home", env.home(), "--config", env.config(),
                                    "lookup", "--keys-from", fifo, "city_to_country"};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(1);
    ::close(2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }

  // Opening the pipe to write returns once planb opened it to read. A planb that never does (it failed first)
  // is released by the test's own reader after the deadline.
  std::mutex mutex;
  std::condition_variable opened_cv;
  int writer = -1;
  bool done = false;
  std::thread opener([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    std::lock_guard<std::mutex> lock(mutex);
    writer = fd;
    done = true;
    opened_cv.notify_all();
  });
  bool in_time = false;
  {
    std::unique_lock<std::mutex> lock(mutex);
    in_time = opened_cv.wait_for(lock, std::chrono::seconds(30 * TestTimeScale()), [&] { return done; });
  }
  int releaser = -1;
  if (!in_time) releaser = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  opener.join();
  EXPECT_TRUE(in_time) << "planb never opened --keys-from";
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd/";
  std::error_code ec;
  EXPECT_EQ(std::filesystem::read_symlink(fd_dir + "1", ec).string(), "/dev/null") << ec.message();
  EXPECT_EQ(std::filesystem::read_symlink(fd_dir + "2", ec).string(), "/dev/null") << ec.message();

  static const char kKeys[] = "Paris\n";
  if (writer >= 0) {
    EXPECT_EQ(::write(writer, kKeys, sizeof(kKeys) - 1), static_cast<ssize_t>(sizeof(kKeys) - 1));
    ::close(writer);
  }
  if (releaser >= 0) ::close(releaser);
  int status = 0;
  pid_t waited = -1;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  ASSERT_EQ(waited, pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace planb
