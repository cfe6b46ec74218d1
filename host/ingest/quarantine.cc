#include "host/ingest/quarantine.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/ingest/staging_store.h"

namespace planb {

namespace fs = std::filesystem;

namespace {
constexpr const char* kReasonSuffix = ".reason";
constexpr const char* kAllMaps = "*";
constexpr const char* kDataEntry = "/data.mdb";
constexpr const char* kDeleteEntry = "/delete";  // a deletion batch's map (delete_entry.h)

std::string Join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : " ") + item;
  return text;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

// "<20 digits>.zip" (the staging name, kept in quarantine/).
bool IsBatchFileName(const std::string& name) {
  uint64_t sequence = 0;
  return StagingStore::ParseBatchFileName(name, &sequence);
}
}  // namespace

std::string QuarantineDir(const Home& home) { return home.root() + "/quarantine"; }

Status ListBatchMaps(const std::string& zip_path, std::vector<std::string>* maps) {
  maps->clear();
  int error = 0;
  zip_t* zip = zip_open(zip_path.c_str(), ZIP_RDONLY, &error);
  if (zip == nullptr) return Status::Corruption(zip_path + ": cannot be read as a zip (libzip error " + std::to_string(error) + ")");
  const zip_int64_t entries = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* raw = zip_get_name(zip, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (raw == nullptr) continue;
    const std::string name = raw;
    for (const char* entry : {kDataEntry, kDeleteEntry}) {
      const size_t suffix = std::strlen(entry);
      if (name.size() > suffix && name.compare(name.size() - suffix, suffix, entry) == 0) {
        maps->push_back(name.substr(0, name.size() - suffix));
      }
    }
  }
  zip_discard(zip);
  std::sort(maps->begin(), maps->end());
  return Status::Ok();
}

Status QuarantineBatch(const Home& home, const std::string& zip_path, const std::vector<std::string>& maps,
                       bool maps_known, const std::string& reason, QuarantinedBatch* out) {
  const std::string dir = QuarantineDir(home);
  PLANB_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string name = fs::path(zip_path).filename().string();
  out->name = name;
  out->maps = maps;
  out->maps_known = maps_known;
  out->reason = reason;
  // The reason first: a crash between the two leaves a reason without a zip, which is ignored (and replaced).
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + name + kReasonSuffix,
                                            "maps " + (maps_known ? Join(maps) : std::string(kAllMaps)) + "\n" +
                                                "reason " + LogValue(reason, kMaxRecordedErrorBytes) + "\n"));
  PLANB_RETURN_IF_ERROR(DurableRename(zip_path, dir + "/" + name));
  PLANB_RETURN_IF_ERROR(SyncPath(fs::path(zip_path).parent_path().string()));
  ClearMergeAttempts(zip_path);
  return Status::Ok();
}

Status ListQuarantine(const Home& home, std::vector<QuarantinedBatch>* out) {
  out->clear();
  const std::string dir = QuarantineDir(home);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::Ok();
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsBatchFileName(name)) continue;
    QuarantinedBatch batch;
    batch.name = name;
    std::string text;
    if (ReadSmallFile(dir + "/" + name + kReasonSuffix, &text).ok()) {
      const size_t newline = text.find('\n');
      const std::string maps_line = text.substr(0, newline);
      if (maps_line.rfind("maps ", 0) == 0 && maps_line != std::string("maps ") + kAllMaps) {
        batch.maps = Split(maps_line.substr(5));
        batch.maps_known = true;
      }
      if (newline != std::string::npos && text.compare(newline + 1, 7, "reason ") == 0) {
        batch.reason = text.substr(newline + 8);
        while (!batch.reason.empty() && batch.reason.back() == '\n') batch.reason.pop_back();
      }
    } else {
      // No reason file (a batch put here by hand): its zip still says which maps it holds.
      batch.maps_known = ListBatchMaps(entry.path().string(), &batch.maps).ok();
      batch.reason = "(no reason recorded)";
    }
    out->push_back(std::move(batch));
  }
  if (ec) return Status::IOError("listing " + dir + ": " + ec.message());
  std::sort(out->begin(), out->end(),
            [](const QuarantinedBatch& a, const QuarantinedBatch& b) { return a.name < b.name; });
  return Status::Ok();
}

void MergeBlocks::Block(const std::vector<std::string>& maps, bool maps_known, const std::string& by) {
  if (!maps_known) {
    blocked_.emplace(kAllMaps, by);
    return;
  }
  for (const std::string& map : maps) blocked_.emplace(map, by);
}

bool MergeBlocks::Blocks(const std::vector<std::string>& maps, bool maps_known, std::string* map,
                         std::string* by) const {
  if (blocked_.empty()) return false;
  const auto all = blocked_.find(kAllMaps);
  if (all != blocked_.end()) {
    *map = maps_known && !maps.empty() ? maps.front() : kAllMaps;
    *by = all->second;
    return true;
  }
  if (!maps_known) {
    *map = blocked_.begin()->first;
    *by = blocked_.begin()->second;
    return true;
  }
  for (const std::string& candidate : maps) {
    const auto found = blocked_.find(candidate);
    if (found != blocked_.end()) {
      *map = candidate;
      *by = found->second;
      return true;
    }
  }
  return false;
}

Status InspectQuarantine(const Home& home, std::vector<QuarantinedBatch>* quarantined, std::vector<HeldBatch>* held,
                         MergeBlocks* out_blocks) {
  held->clear();
  MergeBlocks own;
  MergeBlocks& blocks = out_blocks != nullptr ? *out_blocks : own;
  blocks = MergeBlocks();
  PLANB_RETURN_IF_ERROR(ListQuarantine(home, quarantined));
  if (quarantined->empty()) return Status::Ok();
  for (const QuarantinedBatch& batch : *quarantined) blocks.Block(batch.maps, batch.maps_known, batch.name);
  std::vector<StagedBatch> staged;
  PLANB_RETURN_IF_ERROR(StagingStore(home).List(&staged));
  for (const StagedBatch& batch : staged) {
    std::vector<std::string> maps;
    const bool known = ListBatchMaps(batch.path, &maps).ok();
    HeldBatch hold;
    if (blocks.Blocks(maps, known, &hold.map, &hold.by)) {
      hold.sequence = batch.sequence;
      hold.name = StagingStore::BatchFileName(batch.sequence);
      blocks.Block(maps, known, hold.by);  // transitively: its other maps wait too
      held->push_back(std::move(hold));
    }
  }
  return Status::Ok();
}

std::string QuarantineReleaseHint(const Home& home, const std::string& name) {
  const std::string zip = QuarantineDir(home) + "/" + name;
  return "to release it, fix its cause and move it back: mv " + zip + " " + home.staging() +
         "/ (it merges first again, with fresh attempts); or drop it: rm " + zip + " " + zip + kReasonSuffix +
         " (its rows are lost unless loaded again)";
}

}  // namespace planb
