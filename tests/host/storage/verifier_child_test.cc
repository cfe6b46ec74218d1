// planb-verify started by hand, or with a malformed command line: a clear message and exit code 2, never a pass.
// (Its verdicts on real files are tested through VerifyExtractedBatch: batch_verifier_test.cc, lmdb_check_test.cc.)
#include "host/storage/verifier_child.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "host/storage/lmdb_verifier.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ProcessResult;
using ::planb::testing::ProcessSpec;
using ::planb::testing::RunProcess;

// Runs the built planb-verify with `args` through sh, with descriptor 3 as `fd3` says ("3>&-" closed,
// "3>/dev/null" open), so that the test process's own descriptors do not decide it.
ProcessResult RunVerifier(const std::string& fd3, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.binary = "/bin/sh";
  spec.args = {"-c", "exec \"$0\" \"$@\" " + fd3, VerifierProgramPath()};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  return RunProcess(spec);
}

TEST(VerifierProgram, StartedByHandSaysItIsNotForDirectUse) {
  const ProcessResult r = RunVerifier("3>&-", {"/tmp", "--map", "m"});
  EXPECT_EQ(r.exit_code, kVerifyUsageExit) << r.err;
  EXPECT_NE(r.err.find("planb-verify: started by planb to check LMDB files from outside; not for direct use"),
            std::string::npos)
      << r.err;
}

TEST(VerifierProgram, RefusesAMalformedJobNamingWhatIsWrong) {
  ProcessResult r = RunVerifier("3>/dev/null", {});
  EXPECT_EQ(r.exit_code, kVerifyUsageExit) << r.err;
  EXPECT_NE(r.err.find("planb-verify: verifier arguments: the directory is missing"), std::string::npos) << r.err;

  r = RunVerifier("3>/dev/null", {"/tmp", "--map", "m", "state", "", "/no/such.so", "", "10", "1", "two"});
  EXPECT_EQ(r.exit_code, kVerifyUsageExit) << r.err;
  EXPECT_NE(r.err.find("the option count 'two' is not a count"), std::string::npos) << r.err;
}

TEST(VerifierProgram, APluginThatDoesNotLoadIsReportedAsNoVerdictOnTheFile) {
  ::planb::testing::TempDir dir;
  const std::string report_file = dir / "report";
  const ProcessResult r = RunVerifier("3>'" + report_file + "'", {dir.path(), "--map", "m", "state", "",
                                                                  "/no/such/libplanb_state.so", "", "10", "1", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // 'B' <map 0>, then 'E' <kInternal> and the message.
  const std::string report = ::planb::testing::ReadFile(report_file);
  ASSERT_GE(report.size(), 1 + sizeof(uint32_t) + 1 + sizeof(int32_t));
  EXPECT_EQ(report[0], kVerifyBegin);
  uint32_t index = 1;
  std::memcpy(&index, report.data() + 1, sizeof(index));
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(report[5], kVerifyError);
  int32_t code = 0;
  std::memcpy(&code, report.data() + 6, sizeof(code));
  EXPECT_EQ(code, static_cast<int32_t>(Code::kInternal));
  const std::string message = report.substr(10);
  EXPECT_NE(message.find("the verifier could not load a plugin the node uses"), std::string::npos) << message;
  EXPECT_NE(message.find("/no/such/libplanb_state.so"), std::string::npos) << message;
}

}  // namespace
}  // namespace planb
