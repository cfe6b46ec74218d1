#include "host/transfer/snapshot_diff_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "host/common/file_copy.h"
#include "host/common/file_util.h"
#include "host/common/unique_fd.h"
#include "host/config/config.h"
#include "host/transfer/batch_zip.h"

namespace planb {

namespace {

constexpr std::string_view kMagic = "planb-diff";
// The head's lines are short (a batch id is at most kMaxBatchIdBytes): one longer than this is not ours.
constexpr size_t kMaxHeadLine = kMaxBatchIdBytes + 64;

Status Errno(int err, const std::string& what) {
  return Status(err == ENOSPC ? Code::kFull : Code::kIOError, what + ": " + std::strerror(err));
}


Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno, "writing " + path);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Reads the head line by line from a buffer of the file's start.
class HeadReader {
 public:
  HeadReader(std::string_view bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  // The next line without its '\n'; false (with `error`) when there is none within kMaxHeadLine.
  bool Next(std::string_view* line, Status* error) {
    const size_t end = bytes_.find('\n', pos_);
    if (end == std::string_view::npos || end - pos_ > kMaxHeadLine) {
      *error = Bad("line " + std::to_string(line_ + 1) + " is missing or longer than " +
                   std::to_string(kMaxHeadLine) + " bytes");
      return false;
    }
    *line = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    return true;
  }
  size_t consumed() const { return pos_; }
  Status Bad(const std::string& why) const { return Status::Invalid(path_ + ": not a snapshot diff: " + why); }
  int line() const { return line_; }

 private:
  std::string_view bytes_;
  const std::string& path_;
  size_t pos_ = 0;
  int line_ = 0;
};

bool TakePrefix(std::string_view* line, std::string_view prefix) {
  if (line->substr(0, prefix.size()) != prefix) return false;
  line->remove_prefix(prefix.size());
  return true;
}

bool ParseSize(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

Status WriteDiffFile(const std::string& path, const DiffHead& head, const std::vector<std::string>& parts) {
  if (parts.size() != head.batch_ids.size() || parts.empty()) {
    return Status::Internal("snapshot diff " + path + ": " + std::to_string(parts.size()) + " parts for " +
                            std::to_string(head.batch_ids.size()) + " batch ids");
  }
  std::string text = std::string(kMagic) + " " + std::to_string(kDiffFormatVersion) + "\nmap " + head.map +
                     "\nfrom " + head.from.ToString() + "\nto " + head.to.ToString() + "\n";
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < parts.size(); ++i) {
    struct stat st;
    if (::stat(parts[i].c_str(), &st) != 0) return Errno(errno, "reading the size of " + parts[i]);
    sizes.push_back(static_cast<uint64_t>(st.st_size));
    text += "part " + std::to_string(st.st_size) + " " + head.batch_ids[i] + "\n";
  }
  text += "end\n";
  const std::string temp = path + ".tmp";
  (void)::unlink(temp.c_str());
  UniqueFd out(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, HomeFileMode()));
  if (out.get() < 0) return Errno(errno, "creating " + temp);
  Status s = WriteAll(out.get(), text, temp);
  for (size_t i = 0; s.ok() && i < parts.size(); ++i) {
    UniqueFd in(::open(parts[i].c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (in.get() < 0) {
      s = Errno(errno, "opening " + parts[i]);
      break;
    }
    s = CopyFileBytes(in.get(), 0, sizes[i], out.get(), parts[i], temp);
  }
  if (s.ok() && ::close(out.Release()) != 0) s = Errno(errno, "closing " + temp);
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) s = Errno(errno, "renaming " + temp + " to " + path);
  if (!s.ok()) ::unlink(temp.c_str());
  return s;
}

Status ReadDiffFile(const std::string& path, const std::string& out_dir, uint64_t max_total_bytes, DiffHead* head,
                    std::vector<std::string>* part_paths) {
  *head = DiffHead();
  part_paths->clear();
  UniqueFd in(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (in.get() < 0) return Errno(errno, "opening " + path);
  struct stat st;
  if (::fstat(in.get(), &st) != 0) return Errno(errno, "reading the size of " + path);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  // The head is at most its fixed lines plus one line per part.
  std::string start(static_cast<size_t>(std::min<uint64_t>(file_size, (kMaxDiffBatches + 8) * (kMaxHeadLine + 1))),
                    '\0');
  size_t got = 0;
  while (got < start.size()) {
    const ssize_t n = ::pread(in.get(), start.data() + got, start.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno, "reading " + path);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  start.resize(got);
  HeadReader reader(start, path);
  Status error;
  std::string_view line;
  if (!reader.Next(&line, &error)) return error;
  if (line != std::string(kMagic) + " " + std::to_string(kDiffFormatVersion)) {
    return line.substr(0, kMagic.size()) == kMagic ? reader.Bad("format version '" + std::string(line.substr(
                                                                     std::min(line.size(), kMagic.size() + 1))) +
                                                                 "' is not " + std::to_string(kDiffFormatVersion))
                                                   : reader.Bad("it does not start with \"planb-diff\"");
  }
  if (!reader.Next(&line, &error)) return error;
  if (!TakePrefix(&line, "map ") || !IsValidMapName(line)) return reader.Bad("line 2 is not \"map <map name>\"");
  head->map = std::string(line);
  if (!reader.Next(&line, &error)) return error;
  if (!TakePrefix(&line, "from ") || !ContentVersion::Parse(line, &head->from)) {
    return reader.Bad("line 3 is not \"from <content version>\"");
  }
  if (!reader.Next(&line, &error)) return error;
  if (!TakePrefix(&line, "to ") || !ContentVersion::Parse(line, &head->to)) {
    return reader.Bad("line 4 is not \"to <content version>\"");
  }
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  ContentVersion after = head->from;
  for (;;) {
    if (!reader.Next(&line, &error)) return error;
    if (line == "end") break;
    const std::string where = "line " + std::to_string(reader.line());
    if (!TakePrefix(&line, "part ")) return reader.Bad(where + " is neither \"part <bytes> <batch id>\" nor \"end\"");
    const size_t space = line.find(' ');
    uint64_t size = 0;
    if (space == std::string_view::npos || !ParseSize(line.substr(0, space), &size) || size == 0) {
      return reader.Bad(where + ": the part's size is not a count of bytes above 0");
    }
    const std::string_view id = line.substr(space + 1);
    if (!IsValidBatchId(id)) return reader.Bad(where + ": the part's batch id is not a valid batch id");
    if (head->batch_ids.size() == kMaxDiffBatches) {
      return reader.Bad("more than " + std::to_string(kMaxDiffBatches) + " parts");
    }
    if (size > max_total_bytes - total) {
      return reader.Bad("its parts hold more than " + std::to_string(max_total_bytes) + " bytes");
    }
    total += size;
    sizes.push_back(size);
    head->batch_ids.emplace_back(id);
    after.batches += 1;
    after.digest ^= XXH3_64bits(id.data(), id.size());
  }
  if (head->batch_ids.empty()) return reader.Bad("it has no parts");
  // Every part is a batch the snapshot held lacks: `to` is `from` and exactly these batches.
  if (after != head->to) {
    return reader.Bad("its parts take content version " + head->from.ToString() + " to " + after.ToString() +
                      ", not to the " + head->to.ToString() + " it names");
  }
  if (reader.consumed() + total != file_size) {
    return reader.Bad("its parts add up to " + std::to_string(total) + " bytes after a head of " +
                      std::to_string(reader.consumed()) + ", but the file has " + std::to_string(file_size));
  }
  uint64_t offset = reader.consumed();
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string part = out_dir + "/" + std::to_string(i) + ".zip";
    UniqueFd out(::open(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, HomeFileMode()));
    if (out.get() < 0) return Errno(errno, "creating " + part);
    PLANB_RETURN_IF_ERROR(CopyFileBytes(in.get(), offset, sizes[i], out.get(), path, part));
    if (::close(out.Release()) != 0) return Errno(errno, "closing " + part);
    offset += sizes[i];
    part_paths->push_back(part);
  }
  return Status::Ok();
}

}  // namespace planb
