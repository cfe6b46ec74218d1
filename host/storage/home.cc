#include "host/storage/home.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "host/common/file_util.h"

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
  return Status::Ok();
}

Status Home::Open(const std::string& root, Home* home) {
  PLANB_RETURN_IF_ERROR(Locate(root, home));
  for (const std::string& dir : {home->writer(), home->receive(), home->staging(), home->merging(),
                                 home->shards(), home->snapshots(), home->outgoing()}) {
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
