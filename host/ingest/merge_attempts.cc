#include "host/ingest/merge_attempts.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/ingest/staging_store.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr const char* kAttemptsSuffix = ".attempts";
constexpr const char* kInFlightName = ".merge_in_flight";
constexpr const char* kDiedError = "the merging process died during the merge";
// "<batch file name> <count before the attempt>", padded with spaces to a fixed size so that a rewrite in place
// always covers the record before it; all spaces when no merge is in flight.
constexpr size_t kRecordBytes = 40;

std::string InFlightPath(const std::string& staging_dir) { return staging_dir + "/" + kInFlightName; }

std::string StagingDirOf(const std::string& zip_path) { return fs::path(zip_path).parent_path().string(); }

struct InFlight {
  std::string name;  // a staged batch's file name; empty when the record names none
  int count = 0;     // its attempts before the one in flight
};

// The record, or none when it is blank, absent or unreadable (a torn write after a power loss names nothing).
InFlight ReadInFlight(const std::string& staging_dir) {
  InFlight record;
  std::string text;
  if (!ReadSmallFile(InFlightPath(staging_dir), &text).ok() || text.size() != kRecordBytes) return record;
  char name[kRecordBytes + 1] = {0};
  int count = -1;
  uint64_t sequence = 0;
  if (std::sscanf(text.c_str(), "%40s %d", name, &count) == 2 && count >= 0 &&
      StagingStore::ParseBatchFileName(name, &sequence)) {
    record.name = name;
    record.count = count;
  }
  return record;
}

// Overwrites the record in place (created once per staging/; never renamed, never synced: see the header).
Status WriteInFlight(const std::string& staging_dir, const std::string& record_text) {
  std::string record = record_text;
  record.resize(kRecordBytes - 1, ' ');
  record += '\n';
  const std::string path = InFlightPath(staging_dir);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, HomeFileMode());
  if (fd < 0) return Status::IOError("opening " + path + ": " + std::strerror(errno));
  const ssize_t written = ::pwrite(fd, record.data(), record.size(), 0);
  const int saved = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(record.size())) {
    return Status::IOError("writing " + path + ": " + (written < 0 ? std::strerror(saved) : "short write"));
  }
  return Status::Ok();
}

MergeAttempts ReadAttemptsFile(const std::string& zip_path) {
  MergeAttempts attempts;
  std::string text;
  if (!ReadSmallFile(zip_path + kAttemptsSuffix, &text).ok()) return attempts;
  int count = 0;
  if (std::sscanf(text.c_str(), "%d", &count) == 1 && count > 0) attempts.count = count;
  const size_t newline = text.find('\n');
  if (newline != std::string::npos) {
    attempts.last_error = text.substr(newline + 1);
    while (!attempts.last_error.empty() && attempts.last_error.back() == '\n') attempts.last_error.pop_back();
  }
  return attempts;
}

// `attempts` with the death an in-flight `record` of the same batch says happened.
MergeAttempts WithDeath(MergeAttempts attempts, const InFlight& record) {
  if (record.count + 1 > attempts.count) {
    attempts.count = record.count + 1;
    attempts.last_error = kDiedError;
  }
  return attempts;
}
}  // namespace

MergeAttempts ReadMergeAttempts(const std::string& zip_path) {
  const MergeAttempts attempts = ReadAttemptsFile(zip_path);
  const InFlight record = ReadInFlight(StagingDirOf(zip_path));
  if (record.name != fs::path(zip_path).filename().string()) return attempts;
  return WithDeath(attempts, record);
}

Status WriteMergeAttempts(const std::string& zip_path, const MergeAttempts& attempts) {
  return WriteFileAtomically(zip_path + kAttemptsSuffix, std::to_string(attempts.count) + "\n" +
                                                             LogValue(attempts.last_error, kMaxRecordedErrorBytes) +
                                                             "\n");
}

void ClearMergeAttempts(const std::string& zip_path) {
  (void)::unlink((zip_path + kAttemptsSuffix).c_str());
  const std::string staging_dir = StagingDirOf(zip_path);
  if (ReadInFlight(staging_dir).name == fs::path(zip_path).filename().string()) EndMergeInFlight(staging_dir);
}

Status MarkMergeInFlight(const std::string& zip_path, int count) {
  return WriteInFlight(StagingDirOf(zip_path), fs::path(zip_path).filename().string() + " " + std::to_string(count));
}

void EndMergeInFlight(const std::string& staging_dir) { (void)WriteInFlight(staging_dir, ""); }

Status FoldMergeDeath(const std::string& staging_dir) {
  const InFlight record = ReadInFlight(staging_dir);
  if (record.name.empty()) return Status::Ok();
  const std::string zip_path = staging_dir + "/" + record.name;
  std::error_code ec;
  if (fs::exists(zip_path, ec)) {
    const MergeAttempts attempts = ReadAttemptsFile(zip_path);
    const MergeAttempts counted = WithDeath(attempts, record);
    if (counted.count != attempts.count) PLANB_RETURN_IF_ERROR(WriteMergeAttempts(zip_path, counted));
  }
  // Blanked once the death is on disk: a crash in between folds the same death again, which max() makes a no-op.
  return WriteInFlight(staging_dir, "");
}

}  // namespace planb
