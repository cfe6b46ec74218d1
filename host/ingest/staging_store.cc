#include "host/ingest/staging_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "host/common/file_util.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr size_t kNameDigits = 20;
constexpr const char* kZipSuffix = ".zip";
}  // namespace

bool StagingStore::ParseBatchFileName(const std::string& name, uint64_t* sequence) {
  const size_t suffix = std::strlen(kZipSuffix);
  if (name.size() != kNameDigits + suffix || name.compare(kNameDigits, suffix, kZipSuffix) != 0) return false;
  uint64_t value = 0;
  for (size_t i = 0; i < kNameDigits; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *sequence = value;
  return true;
}

std::string StagingStore::BatchName(uint64_t sequence) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020" PRIu64, sequence);
  return name;
}

std::string StagingStore::BatchFileName(uint64_t sequence) { return BatchName(sequence) + kZipSuffix; }

Status StagingStore::Stage(const std::string& zip_path, uint64_t* sequence, bool link_only) {
  // Checked before a number is taken, so a wrong path costs nothing and the error names it.
  struct stat st {};
  if (::stat(zip_path.c_str(), &st) != 0) {
    return Status::IOError("staging " + zip_path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Status::Invalid("staging " + zip_path + ": not a batch zip file");

  FileLock lock;
  PLANB_RETURN_IF_ERROR(lock.Acquire(home_.staging() + "/.lock"));
  const std::string counter = home_.staging() + "/.sequence";
  uint64_t next = 1;
  std::error_code ec;
  if (fs::exists(counter, ec)) {
    std::string text;
    PLANB_RETURN_IF_ERROR(ReadSmallFile(counter, &text));
    if (std::sscanf(text.c_str(), "%" SCNu64, &next) != 1) {
      return Status::Corruption(counter + ": not a sequence number: '" + text + "'");
    }
  }
  // A counter lost or restored from an old backup must not hand out a number still queued.
  std::vector<StagedBatch> queued;
  PLANB_RETURN_IF_ERROR(List(&queued));
  if (!queued.empty() && queued.back().sequence >= next) next = queued.back().sequence + 1;
  // The counter moves first: a crash after it wastes a number but never reuses one.
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(counter, std::to_string(next + 1) + "\n"));
  const std::string target = home_.staging() + "/" + BatchFileName(next);
  // link() refuses an existing name where rename() would silently replace a queued batch.
  if (::link(zip_path.c_str(), target.c_str()) != 0) {
    return Status::IOError("staging " + zip_path + ": linking it to " + target + ": " + std::strerror(errno));
  }
  PLANB_RETURN_IF_ERROR(SyncPath(home_.staging()));
  if (!link_only) {
    if (::unlink(zip_path.c_str()) != 0) {
      return Status::IOError("staging " + zip_path + ": removing it after linking: " + std::strerror(errno));
    }
    PLANB_RETURN_IF_ERROR(SyncPath(fs::path(zip_path).parent_path().string()));
  }
  *sequence = next;
  return Status::Ok();
}

Status StagingStore::List(std::vector<StagedBatch>* out) const {
  out->clear();
  const std::string directory = home_.staging();
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, ec)) {
    uint64_t sequence = 0;
    // symlink_status: a batch is a file staged here, never a link to somewhere else. An entry that vanished
    // meanwhile (merged by another process) is simply not listed.
    std::error_code entry_ec;
    if (ParseBatchFileName(entry.path().filename().string(), &sequence) &&
        fs::is_regular_file(entry.symlink_status(entry_ec))) {
      out->push_back(StagedBatch{sequence, entry.path().string()});
    }
  }
  if (ec) return Status::IOError("listing " + directory + ": " + ec.message());
  std::sort(out->begin(), out->end(),
            [](const StagedBatch& a, const StagedBatch& b) { return a.sequence < b.sequence; });
  return Status::Ok();
}

bool StagingStore::Contains(uint64_t sequence) const {
  struct stat st {};
  const std::string path = home_.staging() + "/" + BatchFileName(sequence);
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace planb
