#include "host/backup/home_backup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "host/common/bulk_xxh3.h"
#include "host/common/file_util.h"
#include "host/ingest/quarantine.h"
#include "host/storage/lmdb_verifier.h"
#include "host/transfer/token.h"
#include "planb/lmdb.h"

namespace planb {

namespace fs = std::filesystem;

namespace {

Status ErrnoAt(int error, const std::string& what) {
  return Status(error == ENOSPC ? Code::kFull : Code::kIOError, what + ": " + std::strerror(error));
}

// Closes a descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// DEST must be new or an empty directory (never a symlink), and its parent a directory.
Status CheckDestination(const std::string& dest) {
  struct stat st {};
  if (::lstat(dest.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return Status::Invalid("backup: " + dest + " exists and is not a directory");
    DIR* dir = ::opendir(dest.c_str());
    if (dir == nullptr) return ErrnoAt(errno, "backup: reading " + dest);
    uint64_t entries = 0;
    while (const dirent* entry = ::readdir(dir)) {
      if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) ++entries;
    }
    ::closedir(dir);
    if (entries > 0) {
      return Status::Invalid("backup: " + dest + " is not empty (" + std::to_string(entries) +
                             " entries): give a new or empty directory; nothing was written");
    }
    return Status::Ok();
  }
  if (errno == ENOTDIR) return Status::Invalid("backup: " + dest + ": a part of its path is not a directory");
  if (errno != ENOENT) return ErrnoAt(errno, "backup: " + dest);
  const std::string parent = fs::path(dest).parent_path().empty() ? "." : fs::path(dest).parent_path().string();
  if (::lstat(parent.c_str(), &st) != 0) return ErrnoAt(errno, "backup: the parent directory of " + dest);
  if (!S_ISDIR(st.st_mode)) return Status::Invalid("backup: " + parent + " (the parent of " + dest + ") is not a directory");
  return Status::Ok();
}

// Copies the regular file `from` to the new file `to`, then reads the copy back and compares its hash with the
// bytes read: a copy that does not read back as the source is an error. `*vanished` when `from` went before it
// could be opened (a batch merged or pruned meanwhile).
Status CopyFileVerified(const std::string& from, const std::string& to, uint64_t* bytes, bool* vanished) {
  *vanished = false;
  *bytes = 0;
  Fd source{::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (source.fd < 0) {
    if (errno == ENOENT) {
      *vanished = true;
      return Status::Ok();
    }
    return ErrnoAt(errno, "backup: opening " + from);
  }
  Fd target{::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, HomeFileMode())};
  if (target.fd < 0) return ErrnoAt(errno, "backup: creating " + to);
  XXH3_state_t* state = XXH3_createState();
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> owned(state, &XXH3_freeState);
  XXH3_64bits_reset(state);
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(source.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoAt(errno, "backup: reading " + from);
    if (n == 0) break;
    XXH3_64bits_update(state, buffer.data(), static_cast<size_t>(n));
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(target.fd, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return ErrnoAt(errno, "backup: writing " + to);
      done += w;
    }
    *bytes += static_cast<uint64_t>(n);
  }
  if (::fsync(target.fd) != 0) return ErrnoAt(errno, "backup: syncing " + to);
  const XXH64_hash_t read_hash = XXH3_64bits_digest(state);
  // Read back from the disk's copy (a fresh descriptor), not from what was written.
  Fd check{::open(to.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (check.fd < 0) return ErrnoAt(errno, "backup: reading back " + to);
  XXH3_64bits_reset(state);
  uint64_t checked = 0;
  for (;;) {
    const ssize_t n = ::read(check.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoAt(errno, "backup: reading back " + to);
    if (n == 0) break;
    XXH3_64bits_update(state, buffer.data(), static_cast<size_t>(n));
    checked += static_cast<uint64_t>(n);
  }
  if (checked != *bytes || XXH3_64bits_digest(state) != read_hash) {
    return Status::Corruption("backup: the copy " + to + " does not read back as " + from + " did");
  }
  return Status::Ok();
}

// Copies every regular file of `from` (a batch directory) into `to`; symlinks and anything else are skipped.
Status CopyBatchDirectory(const std::string& from, const std::string& to, BackupReport* report) {
  DIR* dir = ::opendir(from.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return Status::Ok();  // never made on this home
    return ErrnoAt(errno, "backup: reading " + from);
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == ".." || name == ".lock") continue;
    names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  PLANB_RETURN_IF_ERROR(MakeDirectories(to));
  for (const std::string& name : names) {
    const std::string source = from + "/" + name;
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        ++report->vanished;
        continue;
      }
      return ErrnoAt(errno, "backup: " + source);
    }
    if (S_ISLNK(st.st_mode)) {
      ++report->links_skipped;
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;  // a scratch directory (.check): nothing a restored node needs
    uint64_t bytes = 0;
    bool vanished = false;
    PLANB_RETURN_IF_ERROR(CopyFileVerified(source, to + "/" + name, &bytes, &vanished));
    if (vanished) {
      ++report->vanished;
    } else {
      ++report->zips;
      report->zip_bytes += bytes;
    }
  }
  return SyncPath(to);
}

// LMDB's compacting copy of `shard` into `dir`/data.mdb, under the copy's own read transaction: a consistent
// state while the node's merges go on.
Status CopyShard(const MapEnv& shard, const std::string& dir, uint64_t* bytes) {
  PLANB_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string path = dir + "/data.mdb";
  Fd fd{::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, HomeFileMode())};
  if (fd.fd < 0) return ErrnoAt(errno, "backup: creating " + path);
  const int rc = mdb_env_copyfd2(shard.env(), fd.fd, MDB_CP_COMPACT);
  if (rc == ENOSPC) return ErrnoAt(rc, "backup: copying " + shard.path());
  PLANB_RETURN_IF_ERROR(LmdbStatus(rc, "backup: copying " + shard.path() + " to " + path));
  if (::fsync(fd.fd) != 0) return ErrnoAt(errno, "backup: syncing " + path);
  struct stat st {};
  if (::fstat(fd.fd, &st) == 0) *bytes = static_cast<uint64_t>(st.st_size);
  return SyncPath(dir);
}

Status BuildCopy(Runtime& runtime, const std::string& partial, BackupReport* report,
                 const std::function<void(const std::string&)>& say) {
  const Home& home = runtime.home();
  // The zips first, then the shards (see the header): a batch in both is merged once.
  const std::vector<std::pair<std::string, std::string>> batch_dirs = {
      {home.staging(), "staging"}, {QuarantineDir(home), "quarantine"}, {home.retained(), "retained"}};
  for (const auto& [from, name] : batch_dirs) {
    const uint64_t before = report->zips;
    PLANB_RETURN_IF_ERROR(CopyBatchDirectory(from, partial + "/" + name, report));
    say("copied " + name + "/: " + std::to_string(report->zips - before) + " file(s)");
  }
  std::vector<std::string> maps;
  for (const auto& [map, config] : runtime.config().maps) {
    std::shared_ptr<MapEnv> shard;
    const Status opened = runtime.OpenShard(map, &shard);
    if (opened.code() == Code::kNotFound) continue;  // nothing merged into it yet
    PLANB_RETURN_IF_ERROR(opened.WithContext("backup: map " + map));
    uint64_t bytes = 0;
    PLANB_RETURN_IF_ERROR(CopyShard(*shard, partial + "/shards/" + map, &bytes).WithContext("map " + map));
    ++report->shards;
    report->shard_bytes += bytes;
    maps.push_back(map);
    say("copied shard " + map + " (" + std::to_string(bytes) + " bytes)");
  }
  PLANB_RETURN_IF_ERROR(MakeDirectories(partial + "/shards"));
  if (!maps.empty()) {
    // Every copy checked as a fetched snapshot is, in a child process: a copy that does not open and decode is
    // no backup.
    PLANB_RETURN_IF_ERROR(VerifyExtractedBatch(runtime.catalog(), "the backup", partial + "/shards", maps)
                              .WithContext("backup: verifying the shard copies"));
    say("verified " + std::to_string(maps.size()) + " shard copy(ies) in a child process");
  }
  PLANB_RETURN_IF_ERROR(SyncPath(partial + "/shards"));
  return SyncPath(partial);
}

}  // namespace

Status BackupHome(Runtime& runtime, const std::string& dest_in, BackupReport* report,
                  const std::function<void(const std::string&)>& progress) {
  *report = BackupReport();
  const auto say = [&progress](const std::string& line) {
    if (progress) progress(line);
  };
  std::string dest = dest_in;
  while (dest.size() > 1 && dest.back() == '/') dest.pop_back();
  if (dest.empty()) return Status::Invalid("backup: no destination given");
  const std::string home_root = fs::weakly_canonical(runtime.home().root()).string();
  const std::string dest_full = fs::weakly_canonical(fs::absolute(dest)).string();
  if (dest_full == home_root || dest_full.rfind(home_root + "/", 0) == 0) {
    return Status::Invalid("backup: " + dest + " is inside the home " + runtime.home().root() +
                           ": give a directory outside it");
  }
  PLANB_RETURN_IF_ERROR(CheckDestination(dest));
  const fs::path dest_path(dest);
  const std::string parent = dest_path.parent_path().empty() ? "." : dest_path.parent_path().string();
  const std::string partial = parent + "/." + dest_path.filename().string() + ".partial-" + Token::Random().Shown();
  if (::mkdir(partial.c_str(), HomeDirectoryMode()) != 0) {
    return ErrnoAt(errno, "backup: cannot create " + partial + " beside " + dest);
  }
  Status built = BuildCopy(runtime, partial, report, say);
  if (built.ok()) {
    // rename(2) replaces an empty directory atomically.
    if (::rename(partial.c_str(), dest.c_str()) != 0) {
      built = ErrnoAt(errno, "backup: renaming " + partial + " to " + dest);
    } else {
      built = SyncPath(parent);
    }
  }
  if (!built.ok()) {
    (void)RemoveTree(partial);
    return built;
  }
  return Status::Ok();
}

}  // namespace planb
