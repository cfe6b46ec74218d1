#include "host/storage/orphan_shards.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "host/common/file_util.h"
#include "host/common/log_text.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDeletingSuffix = ".deleting";
constexpr uint64_t kMaxRecordBytes = 1 << 20;

std::string RecordPath(const Home& home) { return home.shards() + "/" + kOrphanRecordName; }

bool ParseMs(std::string_view text, int64_t* out) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty() || text.size() > 19) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

// kCorruption describing the first bad line; kNotFound when there is no record.
Status ReadRecord(const std::string& path, std::map<std::string, int64_t>* record) {
  record->clear();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path);
    return Status::IOError(path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Status::Corruption(path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxRecordBytes) {
    return Status::Corruption(path + ": " + std::to_string(st.st_size) + " bytes, more than a record can be");
  }
  std::string text;
  PLANB_RETURN_IF_ERROR(ReadSmallFile(path, &text));
  size_t at = 0;
  int line_number = 0;
  while (at < text.size()) {
    ++line_number;
    const size_t end = text.find('\n', at);
    const std::string_view line = std::string_view(text).substr(at, end == std::string::npos ? end : end - at);
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    if (end == std::string::npos) return Status::Corruption(where + "the last line is cut (no newline)");
    at = end + 1;
    const size_t space = line.find(' ');
    int64_t first_seen = 0;
    if (space == std::string_view::npos || !IsValidMapName(line.substr(0, space)) ||
        !ParseMs(line.substr(space + 1), &first_seen)) {
      return Status::Corruption(where + "'" + LogValue(line) + "' is not '<map> <first seen, ms>'");
    }
    if (!record->emplace(std::string(line.substr(0, space)), first_seen).second) {
      return Status::Corruption(where + "map " + std::string(line.substr(0, space)) + " is listed twice");
    }
  }
  return Status::Ok();
}

std::string FormatRecord(const std::map<std::string, int64_t>& record) {
  std::string text;
  for (const auto& [map, first_seen] : record) text += map + " " + std::to_string(first_seen) + "\n";
  return text;
}

// The shard directories in shards/ (names that are map names) and the leftovers of interrupted deletions.
Status ListShards(const Home& home, std::vector<std::string>* shards, std::vector<std::string>* leftovers) {
  std::error_code ec;
  fs::directory_iterator it(home.shards(), ec);
  if (ec == std::errc::no_such_file_or_directory) return Status::Ok();
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (!it->is_directory(type_ec)) continue;
    const size_t suffix = std::strlen(kDeletingSuffix);
    if (IsValidMapName(name)) {
      shards->push_back(name);
    } else if (name.size() > suffix + 1 && name[0] == '.' &&
               name.compare(name.size() - suffix, suffix, kDeletingSuffix) == 0) {
      leftovers->push_back(name);
    }
  }
  if (ec) return Status::IOError(home.shards() + ": " + ec.message());
  std::sort(shards->begin(), shards->end());
  return Status::Ok();
}

}  // namespace

Status SweepOrphanShards(const Home& home, const Config& config, EnvCache* envs, int64_t now_ms, bool dry_run,
                         OrphanReport* report) {
  *report = OrphanReport();
  std::vector<std::string> shards, leftovers;
  PLANB_RETURN_IF_ERROR(ListShards(home, &shards, &leftovers));
  if (!dry_run) {
    for (const std::string& name : leftovers) PLANB_RETURN_IF_ERROR(RemoveTree(home.shards() + "/" + name));
  }

  std::map<std::string, int64_t> old_record;
  Status read = ReadRecord(RecordPath(home), &old_record);
  const bool record_exists = read.code() != Code::kNotFound;
  if (read.code() == Code::kCorruption) {
    report->record_problem = read.message() + "; rebuilt with every orphan first seen now";
    old_record.clear();
  } else if (!read.ok() && read.code() != Code::kNotFound) {
    return read;
  }
  const bool trust_record = report->record_problem.empty();

  std::map<std::string, int64_t> record;
  for (const std::string& map : shards) {
    if (config.maps.count(map) != 0) continue;
    auto known = old_record.find(map);
    record[map] = known != old_record.end() ? known->second : now_ms;
  }
  for (const auto& [map, first_seen] : old_record) {
    if (config.maps.count(map) != 0) report->adopted.push_back(map);
  }

  for (auto it = record.begin(); it != record.end();) {
    const OrphanShard orphan{it->first, it->second};
    // Subtracted as unsigned: a first-seen time far in the past or future must not overflow.
    const bool due = trust_record && now_ms >= orphan.first_seen_ms &&
                     static_cast<uint64_t>(now_ms) - static_cast<uint64_t>(orphan.first_seen_ms) >=
                         static_cast<uint64_t>(config.delete_orphans_after_ms);
    if (!due) {
      report->waiting.push_back(orphan);
      ++it;
      continue;
    }
    if (!dry_run) {
      const std::string shard = home.ShardPath(orphan.map);
      const std::string doomed = home.shards() + "/." + orphan.map + kDeletingSuffix;
      PLANB_RETURN_IF_ERROR(RemoveTree(doomed));
      PLANB_RETURN_IF_ERROR(DurableRename(shard, doomed));
      if (envs != nullptr) envs->Forget(shard);
      PLANB_RETURN_IF_ERROR(RemoveTree(doomed));
    }
    report->deleted.push_back(orphan);
    it = record.erase(it);
  }

  if (dry_run || (record == old_record && trust_record)) return Status::Ok();
  if (record.empty() && trust_record) {
    if (!record_exists) return Status::Ok();
    PLANB_RETURN_IF_ERROR(RemoveTree(RecordPath(home)));
    return SyncPath(home.shards());
  }
  return WriteFileAtomically(RecordPath(home), FormatRecord(record));
}

}  // namespace planb
