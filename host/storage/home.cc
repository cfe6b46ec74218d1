#include "host/storage/home.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "host/common/file_util.h"
#include "host/common/log_text.h"

namespace planb {

Status Home::Locate(const std::string& root, Home* home) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(root, ec);
  if (ec) return Status::IOError("home " + root + ": " + ec.message());
  home->root_ = absolute.lexically_normal().string();
  if (home->root_.size() > 1 && home->root_.back() == '/') home->root_.pop_back();
  if (std::filesystem::exists(home->root_, ec) && !std::filesystem::is_directory(home->root_, ec)) {
    return Status::Invalid("home " + home->root_ + " is not a directory");
  }
  return home->RefuseLinkedDirectories();
}

std::vector<std::string> Home::Directories() const {
  return {writer(), receive(), staging(), merging(), shards(), snapshots(), outgoing(), retained()};
}

// planb clears receive/, merging/ and outgoing/ and writes everywhere below the home as the node's user: a
// subdirectory swapped for a symlink (or anything but a directory) would point that at another tree. The root
// itself may be a link an operator made; nothing below it may be.
Status Home::RefuseLinkedDirectories() const {
  for (const std::string& dir : Directories()) {
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      return Status::IOError("home " + LogValue(root_) + ": cannot examine " + LogValue(dir) + ": " +
                             std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      return Status::Invalid("home " + LogValue(root_) + ": " + LogValue(dir) +
                             " is a symbolic link; planb refuses to follow links inside its home (replace it with "
                             "a directory, or point home = at the other location)");
    }
    if (!S_ISDIR(st.st_mode)) {
      return Status::Invalid("home " + LogValue(root_) + ": " + LogValue(dir) + " is not a directory");
    }
  }
  return Status::Ok();
}

Status Home::Open(const std::string& root, Home* home) {
  PLANB_RETURN_IF_ERROR(Locate(root, home));
  for (const std::string& dir : home->Directories()) {
    PLANB_RETURN_IF_ERROR(MakeDirectories(dir).WithContext("home " + home->root_));
    // Existing directories of another user's home or a read-only mount: say so now, not midway through a load.
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      return Status::IOError("home " + home->root_ + ": cannot write " + dir + " (" + std::strerror(errno) +
                             "); this command writes to the home (lookup, query and stores do not need to)");
    }
  }
  return Status::Ok();
}

}  // namespace planb
