#include "host/plugin_host/plugin_file_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "host/common/log_text.h"

namespace planb {

namespace {

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Empty when `path` is owned by root or by us and nobody else may write it; else why not. `what` names it in
// the text ("its file" needs no path: the plugin's own is in front of every message; a directory gets its path).
std::string Untrusted(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return "cannot examine " + what + ": " + std::strerror(errno);
  }
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    return what + " is owned by uid " + std::to_string(st.st_uid) +
           ", neither root nor this process's user, so that account could change the code run here";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return what + " has mode " + OctalMode(st.st_mode) + ", writable by " +
           ((st.st_mode & S_IWOTH) != 0 ? "others" : "its group") + " (chmod go-w " + LogValue(path) + ")";
  }
  return "";
}

}  // namespace

Status CheckPluginFileTrust(const std::string& path, std::string* reason) {
  namespace fs = std::filesystem;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    *reason = std::string("cannot be resolved: ") + std::strerror(errno);
    return Status::Invalid("plugin " + LogValue(path) + ": " + *reason);
  }
  const std::string real = resolved;
  const std::string real_dir = fs::path(real).parent_path().string();
  std::vector<std::pair<std::string, std::string>> checks{
      {real, fs::is_symlink(path) ? "the file it links to, " + LogValue(real) + "," : std::string("the file")},
      {real_dir, "its directory " + LogValue(real_dir)}};
  const std::string named_dir = fs::path(path).parent_path().string();
  if (!named_dir.empty() && named_dir != real_dir) checks.emplace_back(named_dir, "its directory " + LogValue(named_dir));
  for (const auto& [checked, what] : checks) {
    std::string why = Untrusted(checked, what);
    if (!why.empty()) {
      *reason = "refused before loading: " + why;
      return Status::Invalid("plugin " + LogValue(path) + ": " + *reason);
    }
  }
  return Status::Ok();
}

}  // namespace planb
