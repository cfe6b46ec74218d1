#include "host/security/key_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "host/common/log_text.h"
#include "host/common/text_lines.h"

namespace planb {
namespace {

constexpr size_t kMaxKeyNameLength = 200;
constexpr off_t kMaxKeyFileSize = 4096;

// Paths in messages come from the command line or the config: escaped (no forged lines), capped generously.
std::string Shown(const std::string& path) { return LogValue(path, 4096); }

std::string Errno(const std::string& path, const char* what) {
  return Shown(path) + ": " + what + ": " + std::strerror(errno);
}

// Writes all of `text` to a new file (O_EXCL) with exactly `mode` and syncs it. On failure the file is removed.
Status CreateExclusive(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Invalid(Shown(path) + ": exists; nothing was written (keygen never overwrites)");
    return Status::IOError(Errno(path, "cannot create"));
  }
  size_t done = 0;
  Status status;
  // fchmod: the umask must not widen nor (for the secret) leave it anything but 0600.
  if (mode == 0600 && ::fchmod(fd, mode) != 0) status = Status::IOError(Errno(path, "cannot chmod"));
  while (status.ok() && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) status = Status::IOError(Errno(path, "cannot write"));
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (status.ok() && ::fsync(fd) != 0) status = Status::IOError(Errno(path, "cannot sync"));
  if (::close(fd) != 0 && status.ok()) status = Status::IOError(Errno(path, "cannot close"));
  if (!status.ok()) ::unlink(path.c_str());
  return status;
}

// The lines of a key file; see the header for the format.
Status ParseKeyText(std::string_view text, CurveKeyPair* pair) {
  bool have_public = false;
  bool have_secret = false;
  PLANB_RETURN_IF_ERROR(ForEachLine(text, [&](std::string_view line, size_t line_number) {
    line = TrimBlanks(line);
    if (line.empty() || line.front() == '#') return Status::Ok();
    const std::string where = "line " + std::to_string(line_number) + ": ";
    const size_t equals = line.find('=');
    const std::string_view key = TrimBlanks(line.substr(0, equals == std::string_view::npos ? 0 : equals));
    if (key != "public_key" && key != "secret_key") {
      return Status::Invalid(where + "not 'public_key = Z85' or 'secret_key = Z85'");
    }
    const std::string_view value = TrimBlanks(line.substr(equals + 1));
    const bool is_public = key == "public_key";
    bool& have = is_public ? have_public : have_secret;
    if (have) return Status::Invalid(where + std::string(key) + " given twice");
    have = true;
    const std::string problem = Z85KeyProblem(value);
    if (!problem.empty()) return Status::Invalid(where + std::string(key) + " " + problem);
    (is_public ? pair->public_key : pair->secret_key) = std::string(value);
    return Status::Ok();
  }));
  if (!have_secret) return Status::Invalid("no secret_key line (is this a .pub file?)");
  if (!have_public) return Status::Invalid("no public_key line");
  std::string derived;
  PLANB_RETURN_IF_ERROR(DerivePublicKey(pair->secret_key, &derived));
  if (derived != pair->public_key) return Status::Invalid("public_key is not the public key of secret_key");
  return Status::Ok();
}

}  // namespace

bool IsValidKeyName(std::string_view name) {
  if (name.empty() || name.size() > kMaxKeyNameLength || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Status WriteKeyPair(const std::string& dir, const std::string& name, CurveKeyPair* pair, std::string* key_path,
                    std::string* pub_path) {
  if (!IsValidKeyName(name)) {
    return Status::Invalid("'" + LogValue(name) +
                           "' is not a key name (letters, digits, '-', '_', '.', not starting with '.'; at most 200)");
  }
  const std::string key_file = (std::filesystem::path(dir) / (name + ".key")).string();
  const std::string pub_file = (std::filesystem::path(dir) / (name + ".pub")).string();
  // Checked first so that an existing .pub leaves no new .key behind even for a moment; O_EXCL still decides.
  struct stat st;
  for (const std::string& path : {key_file, pub_file}) {
    if (::lstat(path.c_str(), &st) == 0) {
      return Status::Invalid(Shown(path) + ": exists; nothing was written (keygen never overwrites)");
    }
  }
  CurveKeyPair generated;
  PLANB_RETURN_IF_ERROR(GenerateKeyPair(&generated));
  const std::string key_text = "# Plan B CURVE secret key " + name +
                               ": keep it private (mode 0600). Its public key is in " + name + ".pub.\n" +
                               "public_key = " + generated.public_key + "\nsecret_key = " + generated.secret_key +
                               "\n";
  PLANB_RETURN_IF_ERROR(CreateExclusive(key_file, key_text, 0600));
  const Status pub = CreateExclusive(pub_file, generated.public_key + "\n", 0644);
  if (!pub.ok()) {
    ::unlink(key_file.c_str());
    return pub;
  }
  *pair = std::move(generated);
  *key_path = key_file;
  *pub_path = pub_file;
  return Status::Ok();
}

Status ReadKeyFile(const std::string& path, CurveKeyPair* pair) {
  // One descriptor for the checks and the read: the file checked is the file read. O_NONBLOCK: a FIFO put there
  // must be refused as "not a regular file", not block the open until somebody writes to it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::IOError(Errno(path, "cannot open"));
  struct stat st;
  std::string text;
  Status status;
  if (::fstat(fd, &st) != 0) {
    status = Status::IOError(Errno(path, "cannot stat"));
  } else if (!S_ISREG(st.st_mode)) {
    status = Status::Invalid(Shown(path) + ": not a regular file");
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    status = Status::Invalid(Shown(path) + ": mode " + mode + " lets others read the secret key; it must be 0600 or " +
                             "narrower (chmod 600 " + Shown(path) + ")");
  } else if (st.st_size > kMaxKeyFileSize) {
    status = Status::Invalid(Shown(path) + ": " + std::to_string(st.st_size) + " bytes: not a key file (at most 4096)");
  } else {
    char buffer[kMaxKeyFileSize + 1];
    size_t size = 0;
    while (size < sizeof buffer) {
      const ssize_t n = ::read(fd, buffer + size, sizeof buffer - size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) status = Status::IOError(Errno(path, "cannot read"));
      if (n <= 0) break;
      size += static_cast<size_t>(n);
    }
    if (status.ok() && size > static_cast<size_t>(kMaxKeyFileSize)) {
      status = Status::Invalid(Shown(path) + ": grew past 4096 bytes while read: not a key file");
    }
    text.assign(buffer, size);
    std::memset(buffer, 0, sizeof buffer);
  }
  ::close(fd);
  PLANB_RETURN_IF_ERROR(status);
  CurveKeyPair parsed;
  PLANB_RETURN_IF_ERROR(ParseKeyText(text, &parsed).WithContext(Shown(path)));
  *pair = std::move(parsed);
  return Status::Ok();
}

}  // namespace planb
