// A planb::Reader in another process across the swap of a compacted shard (docs/maintenance.md, "Seeing the new
// shard"): it keeps answering from the old file, and moves to the new one on Maintain() or Refresh().
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "planb/reader.h"
#include "support/map_fixture.h"
#include "support/test_env.h"
#include "tests/host/storage/shard_loads.h"

namespace planb {
namespace {

using ::planb::testing::CompactUnderLock;
using ::planb::testing::LoadAndMerge;
using ::planb::testing::NumberedRows;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

// The child: a Reader on `dir`'s config and home, answering one command per line on `in` with one line on `out`:
// "L <key>" -> the value or "<miss>" or "<error ...>"; "M" Maintain(), "R" Refresh("m") -> "ok" or the error.
[[noreturn]] void ServeReader(const std::string& dir, int in, int out) {
  ReaderOptions options;
  options.config_path = dir + "/planb.ini";
  options.home = dir + "/home";
  options.maintenance_interval_ms = 0;  // the test says when
  std::unique_ptr<Reader> reader;
  FILE* commands = ::fdopen(in, "r");
  FILE* answers = ::fdopen(out, "w");
  if (!Reader::Open(options, &reader).ok() || commands == nullptr || answers == nullptr) ::_exit(3);
  char line[256];
  while (std::fgets(line, sizeof line, commands) != nullptr) {
    std::string command(line);
    if (!command.empty() && command.back() == '\n') command.pop_back();
    std::string answer;
    if (command.rfind("L ", 0) == 0) {
      const LookupResult r = reader->Lookup("m", command.substr(2));
      answer = r.found()                   ? std::string(r.value.view())
               : r.code == Code::kNotFound ? "<miss>"
                                           : "<error " + std::string(r.error) + ">";
    } else if (command == "M" || command == "R") {
      const Status s = command == "M" ? reader->Maintain() : reader->Refresh("m");
      answer = s.ok() ? "ok" : s.message();
    } else {
      break;
    }
    std::fprintf(answers, "%s\n", answer.c_str());
    std::fflush(answers);
  }
  ::_exit(0);
}

class ReaderSwapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OpenRuntime();
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(2000, "v" + std::to_string(i) + "-")).ok());
    }
    runtime_.reset();  // no thread and no open shard in the parent across the fork
    int to_child[2], from_child[2];
    ASSERT_EQ(::pipe(to_child), 0);
    ASSERT_EQ(::pipe(from_child), 0);
    child_ = ::fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      ServeReader(dir_.path(), to_child[0], from_child[1]);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    commands_ = ::fdopen(to_child[1], "w");
    answers_ = ::fdopen(from_child[0], "r");
    ReopenRuntime();
  }
  void TearDown() override {
    if (commands_ != nullptr) std::fclose(commands_);  // EOF: the child exits
    if (answers_ != nullptr) std::fclose(answers_);
    int wstatus = 0;
    if (child_ > 0 && ::waitpid(child_, &wstatus, 0) == child_) {
      EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "reader child status " << wstatus;
    }
  }
  void OpenRuntime() {
    const Status s = OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // The runtime again on the config as written: rewriting it (OpenRuntime) while the child's Reader reads it
  // could hand the child a truncated file with no maps.
  void ReopenRuntime() {
    RuntimeOptions options;
    options.config_path = dir_.path() + "/planb.ini";
    options.home = dir_.path() + "/home";
    const Status s = Runtime::Open(options, &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // One command to the child and its answer ("<gone>" when it died).
  std::string Ask(const std::string& command) {
    std::fprintf(commands_, "%s\n", command.c_str());
    std::fflush(commands_);
    char line[512];
    if (std::fgets(line, sizeof line, answers_) == nullptr) return "<gone>";
    std::string answer(line);
    if (!answer.empty() && answer.back() == '\n') answer.pop_back();
    return answer;
  }
  void Compact() {
    CompactionResult result;
    const Status s = CompactUnderLock(*runtime_, "m", &result);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_LT(result.bytes_after, result.bytes_before);
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  pid_t child_ = -1;
  FILE* commands_ = nullptr;
  FILE* answers_ = nullptr;
};

TEST_F(ReaderSwapTest, AReaderInAnotherProcessKeepsAnsweringAndSeesTheNewShardAfterMaintain) {
  EXPECT_EQ(Ask("L key-7"), "v3-7");
  Compact();
  EXPECT_EQ(Ask("L key-7"), "v3-7");  // the old, deleted file: same rows
  EXPECT_EQ(Ask("L key-1999"), "v3-1999");
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", {{"key-7", "changed"}, {"after", "new"}}).ok());
  EXPECT_EQ(Ask("L after"), "<miss>");  // merged into the new file, which the reader has not opened yet
  EXPECT_EQ(Ask("M"), "ok");
  EXPECT_EQ(Ask("L after"), "new");
  EXPECT_EQ(Ask("L key-7"), "changed");
  EXPECT_EQ(Ask("L key-8"), "v3-8");
}

TEST_F(ReaderSwapTest, RefreshOnAStorageNodeMovesToTheSwappedShard) {
  EXPECT_EQ(Ask("L key-7"), "v3-7");
  EXPECT_EQ(Ask("R"), "ok");  // nothing swapped: a no-op
  Compact();
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", {{"after", "new"}}).ok());
  EXPECT_EQ(Ask("L key-7"), "v3-7");
  EXPECT_EQ(Ask("R"), "ok");
  EXPECT_EQ(Ask("L after"), "new");
  // A second compaction, and a merge, without a lookup in between: still right.
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(2000, "v9-")).ok());
  Compact();
  EXPECT_EQ(Ask("R"), "ok");
  EXPECT_EQ(Ask("L key-7"), "v9-7");
  EXPECT_EQ(Ask("L after"), "new");
}

}  // namespace
}  // namespace planb
