// The merge check of `planb conform` (conform_checks.h).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/load_job.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/kit/conform_checks.h"
#include "host/kit/conform_child.h"
#include "host/kit/conform_rows.h"
#include "host/storage/content_version.h"

extern char** environ;

namespace planb {
namespace {

// Records without a <time> take these effective times: the second file's are a second later, so where a store
// keeps the latest (State), the second file wins, whatever the files' modification times.
constexpr int64_t kFirstEffectiveTimeMs = 946684800000;  // 2000-01-01T00:00:00Z
constexpr char kSecondEffectiveTime[] = "2000-01-01T00:00:01Z";


constexpr uint64_t kMaxExpectBytes = 64u << 20;  // the expected model is read whole
constexpr size_t kLinesShown = 5;

// Splits `text` into lines without their "\n" (or "\r\n": a CSV saved on Windows); no last empty line.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

}  // namespace

Status ReadExpectedRows(const std::string& path, std::vector<std::string>* lines) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::Invalid("--expect " + LogValue(path) + ": " + ec.message());
  if (size > kMaxExpectBytes) return Status::Invalid("--expect " + LogValue(path) + ": larger than 64 MiB");
  std::string text;
  PLANB_RETURN_IF_ERROR(ReadSmallFile(path, &text).WithContext("--expect"));
  *lines = Lines(text);
  if (lines->empty()) return Status::Invalid("--expect " + LogValue(path) + ": empty (the CSV header is missing)");
  return Status::Ok();
}

namespace {

// Header plus rows, as `query --format csv` prints them.
Status ReadRows(const MapEnv& shard, std::vector<std::string>* lines) {
  std::vector<std::string> rows;
  PLANB_RETURN_IF_ERROR(ScanLines(shard, ScanRequest(), &rows));
  lines->assign(1, HeaderLine(shard.plugins().type_descriptor()));
  lines->insert(lines->end(), rows.begin(), rows.end());
  return Status::Ok();
}

// Header first, then the rows sorted: the lines as a set (rows are distinct: one line per stored row).
std::vector<std::string> AsSet(std::vector<std::string> lines) {
  std::sort(lines.begin() + (lines.empty() ? 0 : 1), lines.end());
  return lines;
}

void CompareLines(const std::vector<std::string>& expected, const std::vector<std::string>& got,
                  const std::string& what, CheckResult* result) {
  if (expected == got) return;
  std::vector<std::string> expected_sorted(expected), got_sorted(got);
  std::sort(expected_sorted.begin(), expected_sorted.end());
  std::sort(got_sorted.begin(), got_sorted.end());
  if (expected_sorted == got_sorted) {
    result->Fail(what +
                 ": the expected rows, in another order; rows are compared in `query --format csv` order "
                 "(LMDB key order: a hashed scheme orders keys by their hash); --unordered compares them as a set");
  }
  if (expected.size() != got.size()) {
    result->Fail(what + ": " + std::to_string(got.size() - 1) + " row(s), expected " +
                 std::to_string(expected.size() - 1));
  }
  size_t shown = 0;
  for (size_t i = 0; i < std::max(expected.size(), got.size()) && shown < kLinesShown; ++i) {
    const std::string e = i < expected.size() ? LogValue(expected[i]) : "(none)";
    const std::string g = i < got.size() ? LogValue(got[i]) : "(none)";
    if (i < expected.size() && i < got.size() && expected[i] == got[i]) continue;
    result->Fail(what + ": line " + std::to_string(i + 1) + ": expected " + e + ", got " + g);
    ++shown;
  }
}

Status ReadVersion(const MapEnv& shard, ContentVersion* version) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), MDB_RDONLY));
  return ReadContentVersion(txn.get(), shard.meta(), version);
}

// Runs `planb --config CONFIG load FILE` with PLANB_FAULT=merge.after_commit: the child dies (SIGKILL) once the
// batch's merge committed, before the staged zip is removed. Its output goes to `log`.
Status LoadInterruptedAfterCommit(const std::string& exe, const std::string& config, const std::string& file,
                                  const std::string& log, int* wait_status) {
  std::vector<std::string> args{exe, "--config", config, "load", "--effective-time", kSecondEffectiveTime, file};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PLANB_FAULT=", 12) != 0) env_text.emplace_back(*e);
  }
  env_text.emplace_back("PLANB_FAULT=merge.after_commit");
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::IOError("starting " + exe + ": " + std::strerror(rc));
  while (::waitpid(pid, wait_status, 0) < 0) {
    if (errno != EINTR) return Status::IOError(std::string("waiting for the second load: ") + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

void CheckResult::Fail(const std::string& note) {
  constexpr size_t kMaxNotes = 12;
  if (notes.size() < kMaxNotes) notes.push_back(note);
}

Status CheckMerge(Runtime& runtime, const ConformOptions& options, const std::vector<std::string>& expected,
                  const std::string& config_path, const std::string& scratch, CheckResult* result) {

  LoadOptions load;
  load.effective_time_ms = kFirstEffectiveTimeMs;  // before the second file's: its values are the newer ones
  LoadReport report;
  Status s = RunLoad(runtime, {options.first}, load, &report);
  if (!s.ok()) {
    result->Fail("loading " + LogValue(options.first) + ": " + s.message());
    return Status::Ok();
  }
  if (report.streams.empty() || report.streams[0].records.count(options.map) == 0) {
    result->Fail(LogValue(options.first) + " holds no record of map '" + options.map +
                 "' (name it in each <map>, or pass --map)");
    return Status::Ok();
  }

  const std::string log = scratch + "/second-load.log";
  int wait_status = 0;
  PLANB_RETURN_IF_ERROR(LoadInterruptedAfterCommit(options.planb_exe, config_path, options.second, log, &wait_status));
  if (!WIFSIGNALED(wait_status) || WTERMSIG(wait_status) != SIGKILL) {
    const std::string text = ReadLogTail(log, 4096);  // its last lines: what the load said before it stopped
    result->Fail("loading " + LogValue(options.second) + " did not reach its commit: " +
                 (text.empty() ? "exit status " + std::to_string(WEXITSTATUS(wait_status)) : text));
    return Status::Ok();
  }

  std::shared_ptr<MapEnv> shard;
  PLANB_RETURN_IF_ERROR(runtime.OpenShard(options.map, &shard));
  std::vector<std::string> rows;
  PLANB_RETURN_IF_ERROR(ReadRows(*shard, &rows));
  if (options.unordered) {
    CompareLines(AsSet(expected), AsSet(rows), "rows after both files (as a set: --unordered)", result);
  } else {
    CompareLines(expected, rows, "rows after both files", result);
  }

  // The batch is still staged, as after a crash between commit and removal: merging it again must change nothing.
  ContentVersion before;
  PLANB_RETURN_IF_ERROR(ReadVersion(*shard, &before));
  std::vector<StagedBatch> staged;
  PLANB_RETURN_IF_ERROR(StagingStore(runtime.home()).List(&staged));
  if (staged.size() != 1) {
    result->Fail("after the interrupted second load, " + std::to_string(staged.size()) +
                 " batch(es) are staged, expected 1");
    return Status::Ok();
  }
  MergeProcessor merger(runtime);
  MergeReport again;
  s = merger.MergePending(&again);
  if (!s.ok() || again.merged.count(staged[0].sequence) == 0) {
    result->Fail("merging the staged second batch again failed: " + s.message());
    return Status::Ok();
  }
  ContentVersion after;
  PLANB_RETURN_IF_ERROR(ReadVersion(*shard, &after));
  if (after != before) {
    result->Fail("the second batch, merged again, was not skipped: content version " + before.ToString() + " became " +
                 after.ToString());
  }
  std::vector<std::string> rows_again;
  PLANB_RETURN_IF_ERROR(ReadRows(*shard, &rows_again));
  CompareLines(rows, rows_again, "rows after merging the second batch again", result);
  return Status::Ok();
}

Status CheckMergeOrder(const MapEnv& shard, const ConformOptions& options, const std::string& reversed_config_path,
                       CheckResult* result) {
  RuntimeOptions runtime_options;
  runtime_options.config_path = reversed_config_path;
  std::unique_ptr<Runtime> reversed;
  PLANB_RETURN_IF_ERROR(Runtime::Open(runtime_options, &reversed));
  int64_t second_ms = 0;
  if (!ParseIsoTime(kSecondEffectiveTime, &second_ms)) return Status::Internal("conform: the second file's time");
  const std::pair<const std::string*, int64_t> loads[] = {{&options.second, second_ms},
                                                          {&options.first, kFirstEffectiveTimeMs}};
  for (const auto& [file, time_ms] : loads) {
    LoadOptions load;
    load.effective_time_ms = time_ms;
    LoadReport report;
    const Status s = RunLoad(*reversed, {*file}, load, &report);
    if (!s.ok()) {
      result->Fail("loading " + LogValue(*file) + " into the second home: " + s.message());
      return Status::Ok();
    }
  }
  std::shared_ptr<MapEnv> other;
  PLANB_RETURN_IF_ERROR(reversed->OpenShard(options.map, &other));
  std::vector<std::string> forward;
  std::vector<std::string> backward;
  PLANB_RETURN_IF_ERROR(ReadRows(shard, &forward));
  PLANB_RETURN_IF_ERROR(ReadRows(*other, &backward));
  // As sets: a scheme may place keys by arrival (clash numbers, ids), which orders the rows differently.
  CompareLines(AsSet(forward), AsSet(backward), "rows after the second file then the first (merges must commute)",
               result);
  return Status::Ok();
}

}  // namespace planb
