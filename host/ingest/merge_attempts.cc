#include "host/ingest/merge_attempts.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/ingest/staging_store.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr const char* kAttemptsSuffix = ".attempts";
constexpr const char* kInFlightName = ".merge_in_flight";
constexpr const char* kAloneMark = " alone";
constexpr const char* kDiedError = "the merging process died during the merge";
// "<batch file name> <count before the attempt>[ <what is being merged>]", padded with spaces to a fixed size so
// that a rewrite in place always covers the record before it; all spaces when no merge is in flight. What is being
// merged (the map and its plugins, escaped, one line) is cut to fit. Records of 40 bytes, without it, are an
// earlier release's and are read as well.
constexpr size_t kRecordBytes = 512;
constexpr size_t kEarlierRecordBytes = 40;

std::string InFlightPath(const std::string& staging_dir, int slot) {
  const std::string path = staging_dir + "/" + kInFlightName;
  return slot == 0 ? path : path + "." + std::to_string(slot);
}

std::string StagingDirOf(const std::string& zip_path) { return fs::path(zip_path).parent_path().string(); }

struct InFlight {
  std::string name;  // a staged batch's file name; empty when the record names none
  int count = 0;     // its attempts before the one in flight
  int slot = 0;
  std::string what;  // the map (and plugins) being merged when it was written; empty when not said
};

// The record of `slot`, or none when it is blank, absent or unreadable (a torn write after a power loss names
// nothing).
InFlight ReadInFlight(const std::string& staging_dir, int slot) {
  InFlight record;
  record.slot = slot;
  std::string text;
  if (!ReadSmallFile(InFlightPath(staging_dir, slot), &text).ok()) return record;
  if (text.size() != kRecordBytes && text.size() != kEarlierRecordBytes) return record;
  char name[kEarlierRecordBytes + 1] = {0};
  int count = -1;
  int used = 0;
  uint64_t sequence = 0;
  if (std::sscanf(text.c_str(), "%40s %d%n", name, &count, &used) == 2 && count >= 0 &&
      StagingStore::ParseBatchFileName(name, &sequence)) {
    record.name = name;
    record.count = count;
    std::string what = text.substr(static_cast<size_t>(used));
    const size_t first = what.find_first_not_of(' ');
    const size_t last = what.find_last_not_of(" \n");
    record.what = first == std::string::npos || last == std::string::npos ? "" : what.substr(first, last - first + 1);
  }
  return record;
}

// Every slot's record that names a batch still staged in `staging_dir`. A record of a batch no longer staged
// (merged or quarantined after all) says nothing.
std::vector<InFlight> StagedInFlight(const std::string& staging_dir) {
  std::vector<InFlight> records;
  for (int slot = 0; slot < kMaxMergeSlots; ++slot) {
    InFlight record = ReadInFlight(staging_dir, slot);
    std::error_code ec;
    if (!record.name.empty() && fs::exists(staging_dir + "/" + record.name, ec)) records.push_back(record);
  }
  return records;
}

// Overwrites the record in place (created once per staging/ and slot; never renamed, never synced: see the header).
Status WriteInFlight(const std::string& staging_dir, int slot, const std::string& record_text) {
  std::string record = record_text;
  record.resize(kRecordBytes - 1, ' ');
  record += '\n';
  const std::string path = InFlightPath(staging_dir, slot);
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

// Blanks a slot's record when it exists (no file is made for a slot never used).
void BlankInFlight(const std::string& staging_dir, int slot) {
  std::error_code ec;
  if (fs::exists(InFlightPath(staging_dir, slot), ec)) (void)WriteInFlight(staging_dir, slot, "");
}

MergeAttempts ReadAttemptsFile(const std::string& zip_path) {
  MergeAttempts attempts;
  std::string text;
  if (!ReadSmallFile(zip_path + kAttemptsSuffix, &text).ok()) return attempts;
  int count = 0;
  if (std::sscanf(text.c_str(), "%d", &count) == 1 && count > 0) attempts.count = count;
  const size_t newline = text.find('\n');
  const std::string first_line = text.substr(0, newline);
  const std::string mark = kAloneMark;
  attempts.alone = first_line.size() > mark.size() && first_line.compare(first_line.size() - mark.size(),
                                                                          mark.size(), mark) == 0;
  if (newline != std::string::npos) {
    attempts.last_error = text.substr(newline + 1);
    while (!attempts.last_error.empty() && attempts.last_error.back() == '\n') attempts.last_error.pop_back();
  }
  return attempts;
}

// `attempts` as the in-flight `records` (of batches still staged) leave them, for the batch `name`: one record
// naming it counts a death; several naming any batches make each of those batches `alone`, counting nothing.
MergeAttempts WithDeaths(MergeAttempts attempts, const std::string& name, const std::vector<InFlight>& records) {
  for (const InFlight& record : records) {
    if (record.name != name) continue;
    if (records.size() > 1) {
      if (!attempts.alone) {
        attempts.alone = true;
        attempts.last_error = "the merging process died while " + std::to_string(records.size()) +
                              " batches were merging (which one killed it is not known: each is merged alone next)";
      }
    } else if (record.count + 1 > attempts.count) {
      attempts.count = record.count + 1;
      attempts.last_error = record.what.empty() ? kDiedError : std::string(kDiedError) + " of " + record.what;
    }
  }
  return attempts;
}

bool SameAttempts(const MergeAttempts& a, const MergeAttempts& b) {
  return a.count == b.count && a.alone == b.alone && a.last_error == b.last_error;
}
}  // namespace

MergeAttempts ReadMergeAttempts(const std::string& zip_path) {
  return WithDeaths(ReadAttemptsFile(zip_path), fs::path(zip_path).filename().string(),
                    StagedInFlight(StagingDirOf(zip_path)));
}

Status WriteMergeAttempts(const std::string& zip_path, const MergeAttempts& attempts) {
  return WriteFileAtomically(zip_path + kAttemptsSuffix,
                             std::to_string(attempts.count) + (attempts.alone ? kAloneMark : "") + "\n" +
                                 LogValue(attempts.last_error, kMaxRecordedErrorBytes) + "\n");
}

void ClearMergeAttempts(const std::string& zip_path) {
  (void)::unlink((zip_path + kAttemptsSuffix).c_str());
  const std::string staging_dir = StagingDirOf(zip_path);
  const std::string name = fs::path(zip_path).filename().string();
  for (int slot = 0; slot < kMaxMergeSlots; ++slot) {
    if (ReadInFlight(staging_dir, slot).name == name) EndMergeInFlight(staging_dir, slot);
  }
}

Status MarkMergeInFlight(const std::string& zip_path, int count, int slot) {
  if (slot < 0 || slot >= kMaxMergeSlots) return Status::Invalid("merge slot " + std::to_string(slot) + " out of range");
  return WriteInFlight(StagingDirOf(zip_path), slot,
                       fs::path(zip_path).filename().string() + " " + std::to_string(count));
}

Status NoteMergeInFlightPart(const std::string& zip_path, int count, int slot, const std::string& what) {
  if (slot < 0 || slot >= kMaxMergeSlots) return Status::Invalid("merge slot " + std::to_string(slot) + " out of range");
  // Cut to the record's size by WriteInFlight.
  return WriteInFlight(StagingDirOf(zip_path), slot,
                       fs::path(zip_path).filename().string() + " " + std::to_string(count) + " " +
                           LogValue(what, kRecordBytes));
}

void EndMergeInFlight(const std::string& staging_dir, int slot) { (void)WriteInFlight(staging_dir, slot, ""); }

Status FoldMergeDeath(const std::string& staging_dir) {
  const std::vector<InFlight> records = StagedInFlight(staging_dir);
  for (const InFlight& record : records) {
    const std::string zip_path = staging_dir + "/" + record.name;
    const MergeAttempts attempts = ReadAttemptsFile(zip_path);
    const MergeAttempts counted = WithDeaths(attempts, record.name, records);
    if (!SameAttempts(counted, attempts)) PLANB_RETURN_IF_ERROR(WriteMergeAttempts(zip_path, counted));
  }
  // Blanked once the deaths are on disk: a crash in between folds the same deaths again, which changes nothing
  // (max() for one; `alone` is set once for several).
  for (int slot = 0; slot < kMaxMergeSlots; ++slot) BlankInFlight(staging_dir, slot);
  return Status::Ok();
}

}  // namespace planb
