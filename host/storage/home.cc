#include "host/storage/home.h"

#include <filesystem>

#include "host/common/file_util.h"

namespace planb {

Status Home::Open(const std::string& root, Home* home) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(root, ec);
  if (ec) return Status::IOError("home " + root + ": " + ec.message());
  home->root_ = absolute.lexically_normal().string();
  if (home->root_.size() > 1 && home->root_.back() == '/') home->root_.pop_back();
  if (std::filesystem::exists(home->root_, ec) && !std::filesystem::is_directory(home->root_, ec)) {
    return Status::Invalid("home " + home->root_ + " is not a directory");
  }
  for (const std::string& dir : {home->writer(), home->receive(), home->staging(), home->merging(),
                                 home->shards(), home->snapshots(), home->outgoing()}) {
    PLANB_RETURN_IF_ERROR(MakeDirectories(dir).WithContext("home " + home->root_));
  }
  return Status::Ok();
}

}  // namespace planb
