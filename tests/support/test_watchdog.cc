// A per-test time limit for runs of many tests in one process (the ASan pass's shards, scripts/sanitize.sh), where
// ctest's per-test timeout does not apply: with PLANB_TEST_WATCHDOG_SECONDS=N in the environment, a test still
// running after N seconds ends the process with a message naming it, instead of holding its whole shard until the
// shard's own limit. Unset (ctest's runs): nothing is armed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace planb::testing {
namespace {

// Written before each test starts, read by the signal handler: a fixed buffer, no allocation there.
char g_running[512] = "";

void OnAlarm(int) {
  static const char kHead[] = "\nPLANB_TEST_WATCHDOG_SECONDS passed while running ";
  (void)!::write(STDERR_FILENO, kHead, sizeof(kHead) - 1);
  (void)!::write(STDERR_FILENO, g_running, std::strlen(g_running));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(124);
}

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit Watchdog(unsigned seconds) : seconds_(seconds) {}
  void OnTestStart(const ::testing::TestInfo& test) override {
    std::snprintf(g_running, sizeof(g_running), "%s.%s", test.test_suite_name(), test.name());
    ::alarm(seconds_);
  }
  void OnTestEnd(const ::testing::TestInfo&) override { ::alarm(0); }

 private:
  const unsigned seconds_;
};

const bool g_installed = [] {
  const char* text = std::getenv("PLANB_TEST_WATCHDOG_SECONDS");
  const long seconds = text != nullptr ? std::strtol(text, nullptr, 10) : 0;
  if (seconds <= 0) return false;
  struct sigaction action {};
  action.sa_handler = OnAlarm;
  ::sigaction(SIGALRM, &action, nullptr);
  ::testing::UnitTest::GetInstance()->listeners().Append(new Watchdog(static_cast<unsigned>(seconds)));
  return true;
}();

}  // namespace
}  // namespace planb::testing
