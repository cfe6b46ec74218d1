// OpenClosedStandardDescriptors in a child process started as a supervisor might start planb: with some of
// descriptors 0-2 closed. The next file opened must not take their numbers, so what is printed on stdout or
// stderr never lands in it.
#include "host/common/standard_descriptors.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/test_env.h"

namespace planb {
namespace {

using testing::ReadFile;
using testing::TempDir;

// Whether `fd` is open on /dev/null.
bool IsDevNull(int fd) {
  struct stat at;
  struct stat null;
  return ::fstat(fd, &at) == 0 && ::stat("/dev/null", &null) == 0 && S_ISCHR(at.st_mode) &&
         at.st_rdev == null.st_rdev;
}

// Runs, in a child with `closed` closed: OpenClosedStandardDescriptors (unless `skip`), then opens `path` read-write
// and prints a line on stdout and on stderr. Exit status: 0 when the call succeeded, each of 0-2 is open and the
// closed ones are /dev/null, and the file took a number above 2; 1 otherwise.
int RunChild(const std::vector<int>& closed, const std::string& path, bool skip = false) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const int fd : closed) ::close(fd);
    const bool called = skip || OpenClosedStandardDescriptors();
    bool safe = called;
    for (const int fd : closed) safe = safe && IsDevNull(fd);
    const int file = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
    static const char kLine[] = "a line for the terminal\n";
    (void)!::write(1, kLine, std::strlen(kLine));
    (void)!::write(2, kLine, std::strlen(kLine));
    ::_exit(safe && file > 2 ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(StandardDescriptors, ClosedOnesAreDevNullBeforeAnyFileTakesTheirNumbers) {
  TempDir dir;
  for (const std::vector<int>& closed : std::vector<std::vector<int>>{{1}, {2}, {1, 2}, {0, 1, 2}, {0, 2}}) {
    const std::string path = dir / ("file-" + std::to_string(closed.size()) + "-" + std::to_string(closed.back()));
    EXPECT_EQ(RunChild(closed, path), 0) << closed.size() << " closed, the last " << closed.back();
    EXPECT_EQ(ReadFile(path), "") << "a line printed went into the file";
  }
}

TEST(StandardDescriptors, WithoutTheCallTheFileTakesStdoutAndReceivesItsLines) {
  TempDir dir;  // the hazard itself, so that the test above shows its absence and not an accident
  const std::string path = dir / "file";
  EXPECT_EQ(RunChild({1, 2}, path, /*skip=*/true), 1);
  EXPECT_EQ(ReadFile(path), "a line for the terminal\n");
}

TEST(StandardDescriptors, OpenOnesAreLeftAsTheyAre) {
  TempDir dir;
  const std::string path = dir / "file";
  EXPECT_EQ(RunChild({}, path), 0);
  EXPECT_EQ(ReadFile(path), "");
  EXPECT_TRUE(OpenClosedStandardDescriptors());  // this process: nothing closed, nothing changed
}

}  // namespace
}  // namespace planb
