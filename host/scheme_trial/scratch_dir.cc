#include "host/scheme_trial/scratch_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "host/common/file_util.h"
#include "host/common/log_text.h"

namespace planb {

Status ScratchDir::Create(const std::string& parent) {
  Remove();
  // A parent that does not exist yet is made, with its own parents (as `mkdir -p`), and left in place afterwards.
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::Invalid("--scratch " + LogValue(parent) + ": cannot make the directory: " + ec.message());
    }
  }
  std::string pattern = (parent.empty() ? std::string(".") : parent) + "/planb-bench-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    return Status::Invalid("--scratch " + LogValue(parent) +
                           ": cannot make a scratch directory there: " + std::strerror(errno));
  }
  path_ = buffer.data();
  return Status::Ok();
}

void ScratchDir::Remove() {
  if (path_.empty()) return;
  static_cast<void>(RemoveTree(path_));  // best effort: nothing else can be done about a failure here
  path_.clear();
}

std::string DefaultScratchParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
}

}  // namespace planb
