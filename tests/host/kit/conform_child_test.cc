// RunCheckInChild: a check in a forked child whose verdict comes back whole (notes of many lines, a failing
// Status, a throw), whose death (a signal, an exit before its verdict) is a failed check naming how it died with
// the last lines it printed, and whose output never reaches the parent's stdout.
#include "host/kit/conform_child.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "support/test_env.h"

namespace planb {
namespace {

using ::testing::HasSubstr;

std::string Joined(const CheckResult& result) {
  std::string text;
  for (const std::string& note : result.notes) text += note + "\n";
  return text;
}

class ConformChildTest : public ::testing::Test {
 protected:
  std::string Log() const { return dir_ / "check.log"; }
  testing::TempDir dir_;
};

TEST_F(ConformChildTest, APassingCheckComesBackPassed) {
  const ChildVerdict v = RunCheckInChild("fine", Log(), false, [](CheckResult*) { return Status::Ok(); });
  EXPECT_TRUE(v.stop.ok());
  EXPECT_EQ(v.result.name, "fine");
  EXPECT_TRUE(v.result.ok()) << Joined(v.result);
}

TEST_F(ConformChildTest, NotesOfManyLinesAndBackslashesComeBackAsWritten) {
  const ChildVerdict v = RunCheckInChild("notes", Log(), false, [](CheckResult* r) {
    r->Fail("first line\nsecond line \\n not a line end");
    r->Fail(std::string(5000, 'n'));
    return Status::Ok();
  });
  ASSERT_EQ(v.result.notes.size(), 2u);
  EXPECT_EQ(v.result.notes[0], "first line\nsecond line \\n not a line end");
  EXPECT_EQ(v.result.notes[1], std::string(5000, 'n'));
}

TEST_F(ConformChildTest, AFailingStatusIsANoteOrStopsTheRunWhenAsked) {
  auto failing = [](CheckResult*) { return Status::Corruption("the plugin's whole message\nwith two lines"); };
  ChildVerdict v = RunCheckInChild("check", Log(), false, failing);
  EXPECT_TRUE(v.stop.ok());
  ASSERT_EQ(v.result.notes.size(), 1u);
  EXPECT_EQ(v.result.notes[0], "the plugin's whole message\nwith two lines");
  v = RunCheckInChild("setup", Log(), true, failing);
  EXPECT_EQ(v.stop.code(), Code::kInvalidArgument);
  EXPECT_EQ(v.stop.message(), "the plugin's whole message\nwith two lines");
}

TEST_F(ConformChildTest, AThrowIsAFailedCheck) {
  const ChildVerdict v = RunCheckInChild("check", Log(), false, [](CheckResult*) -> Status {
    throw std::runtime_error("out of the blue");
  });
  EXPECT_THAT(Joined(v.result), HasSubstr("the check threw: out of the blue"));
}

TEST_F(ConformChildTest, ADeathByASignalIsAFailedCheckWithTheChildsLastWords) {
  const ChildVerdict v = RunCheckInChild("check", Log(), false, [](CheckResult*) {
    std::fprintf(stderr, "about to die\n");
    std::fflush(stderr);
    ::kill(::getpid(), SIGKILL);
    return Status::Ok();
  });
  EXPECT_TRUE(v.stop.ok());
  const std::string text = Joined(v.result);
  EXPECT_THAT(text, HasSubstr("the check's process died of signal 9 (Killed)"));
  EXPECT_THAT(text, HasSubstr("  about to die\n"));
}

TEST_F(ConformChildTest, AnExitBeforeTheVerdictIsAFailedCheckAndItsStdoutStaysInTheLog) {
  const ChildVerdict v = RunCheckInChild("check", Log(), false, [](CheckResult*) {
    std::printf("ok 1 - a line that would break the parent's TAP\n");
    std::fflush(stdout);
    ::_exit(3);
    return Status::Ok();
  });
  const std::string text = Joined(v.result);
  EXPECT_THAT(text, HasSubstr("the check's process exited with status 3 before its verdict"));
  EXPECT_THAT(text, HasSubstr("  ok 1 - a line that would break the parent's TAP\n"));
}

// Only the end of a child's output is read (a plugin may print gigabytes), from its first whole line.
TEST_F(ConformChildTest, OnlyTheLastBytesOfALogAreReadFromAWholeLine) {
  testing::WriteFile(Log(), "line1\nline2\nline3\n");
  EXPECT_EQ(ReadLogTail(Log(), 10), "line3\n");
  EXPECT_EQ(ReadLogTail(Log(), 1000), "line1\nline2\nline3\n");
  EXPECT_EQ(ReadLogTail(dir_ / "missing.log", 1000), "");
}

}  // namespace
}  // namespace planb
