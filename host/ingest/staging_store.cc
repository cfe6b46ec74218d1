#include "host/ingest/staging_store.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "host/common/file_util.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr size_t kNameDigits = 20;

bool ParseBatchName(const std::string& name, uint64_t* sequence) {
  if (name.size() != kNameDigits) return false;
  uint64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *sequence = value;
  return true;
}
}  // namespace

std::string StagingStore::BatchName(uint64_t sequence) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020" PRIu64, sequence);
  return name;
}

Status StagingStore::Stage(const std::string& dir, uint64_t* sequence) {
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
  // The counter moves first: a crash after it wastes a number but never reuses one.
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(counter, std::to_string(next + 1) + "\n"));
  PLANB_RETURN_IF_ERROR(DurableRename(dir, home_.staging() + "/" + BatchName(next)));
  *sequence = next;
  return Status::Ok();
}

Status StagingStore::List(const std::string& directory, std::vector<StagedBatch>* out) {
  out->clear();
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, ec)) {
    uint64_t sequence = 0;
    if (entry.is_directory(ec) && ParseBatchName(entry.path().filename().string(), &sequence)) {
      out->push_back(StagedBatch{sequence, entry.path().string()});
    }
  }
  if (ec) return Status::IOError("listing " + directory + ": " + ec.message());
  std::sort(out->begin(), out->end(),
            [](const StagedBatch& a, const StagedBatch& b) { return a.sequence < b.sequence; });
  return Status::Ok();
}

}  // namespace planb
