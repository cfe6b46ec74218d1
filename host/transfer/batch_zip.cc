#include "host/transfer/batch_zip.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "host/common/disk_room.h"
#include "host/common/file_util.h"
#include "host/common/unique_fd.h"
#include "host/config/config.h"
#include "host/transfer/delete_entry.h"
#include "host/transfer/fd_zip_source.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDataFile = "data.mdb";
constexpr size_t kCopyBlock = size_t{1} << 20;
// The manifest is two short lines (the id at most kMaxBatchIdBytes); anything bigger is not ours and is not read
// into memory.
constexpr uint64_t kMaxManifestBytes = 1024;
constexpr std::string_view kIdPrefix = "id ";

constexpr std::string_view kReplaceLine = "replace";

// The oldest version that holds the batch: 2 unless it replaces (4) or deletes (5), so nodes and readers not yet
// upgraded still take loads and snapshots during a rolling upgrade.
std::string ManifestText(const std::string& batch_id, bool deletes, bool replace) {
  const int version = replace ? kReplaceBatchFormatVersion : deletes ? kDeleteBatchFormatVersion : kOldestBatchFormatRead;
  std::string text = std::string(kBatchManifestName) + " " + std::to_string(version) + "\n" + std::string(kIdPrefix) +
                     batch_id + "\n";
  if (replace) text += std::string(kReplaceLine) + "\n";
  return text;
}

// Entry names come from the sender: print control bytes and non-ASCII escaped so a message stays one safe line.
std::string Printable(std::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

Status ErrnoStatus(int err, const std::string& what) {
  return Status(err == ENOSPC ? Code::kFull : Code::kIOError, what + ": " + std::strerror(err));
}

// libzip reports disk errors as a zip code plus errno; ENOSPC is the one callers act on differently.
Status ZipErrorStatus(zip_error_t* error, Code default_code, const std::string& what) {
  Code code = default_code;
  if (zip_error_system_type(error) == ZIP_ET_SYS && zip_error_code_system(error) == ENOSPC) code = Code::kFull;
  return Status(code, what + ": " + zip_error_strerror(error));
}

struct ZipCloser {
  void operator()(zip_t* zip) const { zip_discard(zip); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

struct ZipFileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileCloser>;


Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "writing " + path);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// ---- ZipBatch ----

// The maps of a finished StreamWriter directory, sorted by name (so equal batches give equal zips).
Status ListMaps(const std::string& batch_dir, std::vector<std::string>* maps) {
  std::error_code ec;
  fs::directory_iterator it(batch_dir, ec);
  if (ec) return Status::IOError("listing batch " + batch_dir + ": " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory(ec)) {
      return Status::Invalid(batch_dir + ": '" + Printable(name) + "' is not a map directory");
    }
    if (!IsValidMapName(name)) {
      return Status::Invalid(batch_dir + ": '" + Printable(name) + "' is not a valid map name");
    }
    const bool data = fs::is_regular_file(it->path() / kDataFile, ec);
    const bool deletion = fs::is_regular_file(it->path() / kDeleteEntryName, ec);
    if (data && deletion) {
      return Status::Invalid(batch_dir + "/" + name +
                             ": both data.mdb and delete (a batch adds to a map or deletes from it, not both)");
    }
    if (!data && !deletion) {
      return Status::Invalid(batch_dir + "/" + name + ": no data.mdb or delete (not a finished batch)");
    }
    maps->push_back(name);
  }
  if (ec) return Status::IOError("listing batch " + batch_dir + ": " + ec.message());
  std::sort(maps->begin(), maps->end());
  return Status::Ok();
}

Status AddEntry(zip_t* zip, const std::string& name, zip_source_t* source, bool compress, const std::string& what) {
  zip_int64_t index = zip_file_add(zip, name.c_str(), source, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(source);
    return ZipErrorStatus(zip_get_error(zip), Code::kIOError, what + ": adding " + name);
  }
  // Level 1: LMDB pages are mostly empty space and compress well even at the fastest level.
  int rc = compress ? zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 1)
                    : zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  if (rc != 0) return ZipErrorStatus(zip_get_error(zip), Code::kInternal, what + ": compression of " + name);
  return Status::Ok();
}

// One entry of a zip being written: its name and where its bytes come from (a source made for the zip).
using EntrySources = std::function<Status(zip_t* zip, const std::string& temp)>;

// Writes the manifest, then lets `add_entries` add the maps' entries, into `temp`.
Status WriteZip(const std::string& temp, const ZipOptions& options, bool deletes, const EntrySources& add_entries) {
  int error_code = 0;
  ZipPtr zip(zip_open(temp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error_code));
  if (zip == nullptr) {
    zip_error_t error;
    zip_error_init_with_code(&error, error_code);
    Status s = ZipErrorStatus(&error, Code::kIOError, "creating " + temp);
    zip_error_fini(&error);
    return s;
  }
  // zip_source_buffer does not copy: the text must live until zip_close below.
  const std::string manifest = ManifestText(options.batch_id, deletes, options.replace);
  zip_source_t* source = zip_source_buffer(zip.get(), manifest.data(), manifest.size(), 0);
  if (source == nullptr) return ZipErrorStatus(zip_get_error(zip.get()), Code::kInternal, temp);
  PLANB_RETURN_IF_ERROR(AddEntry(zip.get(), kBatchManifestName, source, options.compress, temp));
  PLANB_RETURN_IF_ERROR(add_entries(zip.get(), temp));
  // zip_close reads the sources and writes everything; on failure the archive is still ours to discard.
  if (zip_close(zip.get()) != 0) return ZipErrorStatus(zip_get_error(zip.get()), Code::kIOError, "writing " + temp);
  (void)zip.release();
  return Status::Ok();
}

// `<map>/data.mdb` or `<map>/delete` from the files of a batch directory.
Status WriteBatchDirZip(const std::string& batch_dir, const std::vector<std::string>& maps, const std::string& temp,
                        const ZipOptions& options) {
  bool deletes = false;
  for (const std::string& map : maps) deletes = deletes || HasDeleteEntry(batch_dir + "/" + map);
  if (deletes && options.replace) return Status::Invalid(batch_dir + ": a replacement batch with delete entries");
  return WriteZip(temp, options, deletes, [&](zip_t* zip, const std::string& temp_path) {
    for (const std::string& map : maps) {
      const std::string entry =
          map + "/" + (HasDeleteEntry(batch_dir + "/" + map) ? std::string(kDeleteEntryName) : std::string(kDataFile));
      const std::string file = batch_dir + "/" + entry;
      zip_source_t* source = zip_source_file_create(file.c_str(), 0, -1, zip_get_error(zip));
      if (source == nullptr) return ZipErrorStatus(zip_get_error(zip), Code::kIOError, "reading " + file);
      PLANB_RETURN_IF_ERROR(AddEntry(zip, entry, source, options.compress, temp_path));
    }
    return Status::Ok();
  });
}

Status InvalidBatchId(const std::string& what_is_zipped, const std::string& batch_id) {
  const std::string what = batch_id.size() > kMaxBatchIdBytes
                               ? "a batch id of " + std::to_string(batch_id.size()) + " bytes"
                               : "batch id '" + Printable(batch_id) + "'";
  return Status::Invalid("zipping " + what_is_zipped + ": " + what + " is not valid (1 to " +
                         std::to_string(kMaxBatchIdBytes) + " bytes, no control characters)");
}

// Writes the zip to `zip_path + ".tmp"` with `write` (given that name), syncs it (options.durable), renames it.
Status PublishZip(const std::string& zip_path, const ZipOptions& options,
                  const std::function<Status(const std::string& temp)>& write) {
  const std::string temp = zip_path + ".tmp";
  Status s = RemoveTree(temp);  // left by a crash mid-zip
  if (s.ok()) s = write(temp);
  // zip_close writes to its own temp file and renames it to `temp`: sync the bytes before publishing the name.
  if (s.ok() && options.durable) s = SyncPath(temp);
  if (s.ok()) s = ApplyHomeMode(temp);  // libzip creates it 0666 less the umask
  if (s.ok() && options.durable) s = DurableRename(temp, zip_path);
  if (s.ok() && !options.durable && ::rename(temp.c_str(), zip_path.c_str()) != 0) {
    s = ErrnoStatus(errno, "renaming " + temp + " to " + zip_path);
  }
  if (!s.ok()) (void)RemoveTree(temp);
  return s;
}

// Reads `fd` to its end, so that a writer on its other end finishes.
void Drain(int fd) {
  std::vector<char> sink(size_t{1} << 16);
  for (;;) {
    const ssize_t n = ::read(fd, sink.data(), sink.size());
    if (n == 0 || (n < 0 && errno != EINTR)) return;
  }
}

// ---- UnzipBatch ----

struct Entry {
  zip_uint64_t index = 0;
  std::string name;
  std::string map;
  uint64_t size = 0;
  bool deletion = false;  // <map>/delete, not <map>/data.mdb
};

// Everything checked before a byte is written: names, manifest, duplicates, counts and declared sizes.
class ZipChecker {
 public:
  ZipChecker(const std::string& zip_path, zip_t* zip, const UnzipLimits& limits)
      : zip_path_(zip_path), zip_(zip), limits_(limits) {}

  // The manifest's batch id, once Check passed.
  const std::string& batch_id() const { return batch_id_; }
  // Whether the manifest says "replace" (version 4), once Check passed.
  bool replace() const { return replace_; }

  Status Check(std::vector<Entry>* entries) {
    zip_int64_t count = zip_get_num_entries(zip_, 0);
    if (count <= 0) return Status::Invalid(zip_path_ + ": no '" + kBatchManifestName + "' manifest (empty zip)");
    if (static_cast<uint64_t>(count) > limits_.max_entries) {
      return Status::Invalid(zip_path_ + ": " + std::to_string(count) + " entries, more than the limit of " +
                             std::to_string(limits_.max_entries));
    }
    uint64_t total = 0;
    std::set<std::string> seen;
    for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(count); ++i) {
      Entry entry;
      PLANB_RETURN_IF_ERROR(Stat(i, &entry));
      const std::string where = zip_path_ + ": entry '" + Printable(entry.name) + "'";
      if (i == 0) {
        if (entry.name != kBatchManifestName) {
          return Status::Invalid(where + ": the first entry must be the '" + kBatchManifestName +
                                 "' manifest (not a Plan B batch)");
        }
        PLANB_RETURN_IF_ERROR(CheckManifest(entry, where));
        continue;
      }
      PLANB_RETURN_IF_ERROR(CheckName(&entry, where));
      if (entry.deletion) PLANB_RETURN_IF_ERROR(CheckDeleteEntry(entry, where));
      if (!seen.insert(entry.map).second) {
        return Status::Invalid(where + ": map '" + entry.map + "' appears twice (a batch adds to a map or deletes " +
                               "from it, once)");
      }
      if (entry.size > limits_.max_total_bytes - total) {
        return Status::Invalid(where + ": declared sizes add up to more than the limit of " +
                               std::to_string(limits_.max_total_bytes) + " bytes (this entry declares " +
                               std::to_string(entry.size) + ")");
      }
      total += entry.size;
      entries->push_back(std::move(entry));
    }
    return Status::Ok();
  }

 private:
  Status Stat(zip_uint64_t index, Entry* entry) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip_, index, ZIP_FL_ENC_RAW, &st) != 0) {
      return ZipErrorStatus(zip_get_error(zip_), Code::kCorruption, zip_path_ + ": entry " + std::to_string(index));
    }
    entry->index = index;
    entry->name = (st.valid & ZIP_STAT_NAME) && st.name != nullptr ? st.name : "";
    const std::string where = zip_path_ + ": entry '" + Printable(entry->name) + "'";
    if (!(st.valid & ZIP_STAT_SIZE)) return Status::Invalid(where + ": no declared size");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
      return Status::Invalid(where + ": encrypted");
    }
    if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE) {
      return Status::Invalid(where + ": compression method " + std::to_string(st.comp_method) +
                             " (only stored and deflate are used)");
    }
    entry->size = st.size;
    return Status::Ok();
  }

  // Exactly "<valid map>/data.mdb" or "<valid map>/delete": IsValidMapName admits no '.', '/', '\\' or ':', so
  // no path escapes dest_dir.
  Status CheckName(Entry* entry, const std::string& where) {
    const std::string& name = entry->name;
    size_t slash = name.find('/');
    const std::string_view file =
        slash == std::string::npos ? std::string_view() : std::string_view(name).substr(slash + 1);
    if (slash == std::string::npos || (file != kDataFile && file != kDeleteEntryName) ||
        !IsValidMapName(std::string_view(name).substr(0, slash))) {
      return Status::Invalid(where +
                             ": not <map>/data.mdb or <map>/delete with a valid map name (lower case letters, "
                             "digits and _, starting with a letter)");
    }
    entry->map = name.substr(0, slash);
    entry->deletion = file == kDeleteEntryName;
    return Status::Ok();
  }

  // A deletion is small text, read whole here (bounded) so that a batch whose entry could not merge is refused
  // before anything is written.
  Status CheckDeleteEntry(const Entry& entry, const std::string& where) {
    if (replace_) return Status::Invalid(where + ": a delete entry in a replacement batch (it holds rows only)");
    if (version_ < kDeleteBatchFormatVersion) {
      return Status::Invalid(where + ": a delete entry in a planb-batch " + std::to_string(version_) +
                             " batch: deletions carry their time since version " +
                             std::to_string(kDeleteBatchFormatVersion) +
                             " (an older planb's deletion cannot merge in any order; run the delete again)");
    }
    if (!limits_.allow_deletes) return Status::Invalid(where + ": a delete entry, where only map data may be");
    if (entry.size > kMaxDeleteEntryBytes) {
      return Status::Invalid(where + ": delete entry of " + std::to_string(entry.size) +
                             " bytes, more than the limit of " + std::to_string(kMaxDeleteEntryBytes));
    }
    ZipFilePtr file(zip_fopen_index(zip_, entry.index, 0));
    if (file == nullptr) return ZipErrorStatus(zip_get_error(zip_), Code::kCorruption, where);
    std::string text(static_cast<size_t>(entry.size) + 1, '\0');
    zip_int64_t n = zip_fread(file.get(), text.data(), text.size());
    if (n < 0) return ZipErrorStatus(zip_file_get_error(file.get()), Code::kCorruption, where);
    text.resize(static_cast<size_t>(n));
    DeleteEntry parsed;
    return ParseDeleteEntry(text, &parsed).WithContext(where);
  }

  Status CheckManifest(const Entry& entry, const std::string& where) {
    if (entry.size > kMaxManifestBytes) return Status::Invalid(where + ": not a Plan B batch manifest (too long)");
    ZipFilePtr file(zip_fopen_index(zip_, entry.index, 0));
    if (file == nullptr) return ZipErrorStatus(zip_get_error(zip_), Code::kCorruption, where);
    char buffer[kMaxManifestBytes + 1];
    zip_int64_t n = zip_fread(file.get(), buffer, sizeof(buffer));
    if (n < 0) return ZipErrorStatus(zip_file_get_error(file.get()), Code::kCorruption, where);
    std::string_view text(buffer, static_cast<size_t>(n));
    const size_t end_of_first = text.find('\n');
    std::string_view first = text.substr(0, end_of_first);
    std::string_view rest = end_of_first == std::string_view::npos ? std::string_view() : text.substr(end_of_first + 1);
    const std::string prefix = std::string(kBatchManifestName) + " ";
    if (first.substr(0, prefix.size()) != prefix) return Status::Invalid(where + ": not a Plan B batch manifest");
    std::string_view version = first.substr(prefix.size());
    if (version == "1") {
      // Its batches carry no id, so a shard could not count them: the data has to be loaded again.
      return Status::Invalid(where + ": planb-batch 1 (written by an older planb, without a batch id; " +
                             "reload the source data)");
    }
    version_ = 0;
    for (int v = kOldestBatchFormatRead; v <= kBatchFormatVersion; ++v) {
      if (version == std::to_string(v)) version_ = v;
    }
    if (version_ == 0) {
      return Status::Invalid(where + ": batch format version '" + Printable(version) + "', this build reads " +
                             std::to_string(kOldestBatchFormatRead) + " to " + std::to_string(kBatchFormatVersion));
    }
    // Versions 2 and 3: exactly one more line, "id <batch id>" (its newline may be missing). Version 4: then
    // optionally "replace".
    if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
    replace_ = false;
    const size_t end_of_id = rest.find('\n');
    if (end_of_id != std::string_view::npos) {
      const std::string_view extra = rest.substr(end_of_id + 1);
      if (version_ < kReplaceBatchFormatVersion || extra != kReplaceLine) {
        return Status::Invalid(where + ": unexpected manifest line '" + Printable(extra) + "' in planb-batch " +
                               std::to_string(version_) + " (only versions 4 and up have one more line, 'replace')");
      }
      replace_ = true;
      rest = rest.substr(0, end_of_id);
    }
    if (rest.substr(0, kIdPrefix.size()) != kIdPrefix) {
      return Status::Invalid(where + ": no 'id <batch id>' line after 'planb-batch " + std::to_string(version_) +
                             "' (found '" + Printable(rest) + "')");
    }
    std::string_view id = rest.substr(kIdPrefix.size());
    if (!IsValidBatchId(id)) {
      const std::string what = id.size() > kMaxBatchIdBytes ? "a batch id of " + std::to_string(id.size()) + " bytes"
                                                            : "batch id '" + Printable(id) + "'";
      return Status::Invalid(where + ": " + what + " is not valid (1 to " + std::to_string(kMaxBatchIdBytes) +
                             " bytes, no control characters)");
    }
    batch_id_ = std::string(id);
    return Status::Ok();
  }

  const std::string& zip_path_;
  zip_t* zip_;
  const UnzipLimits& limits_;
  std::string batch_id_;
  bool replace_ = false;
  int version_ = 0;  // the manifest's format version, once read (it is the first entry)
};

// Errors of zip_fread: the zip's bytes are wrong (CRC, inflate, short file) or something else went wrong.
Code ReadErrorCode(zip_error_t* error) {
  switch (zip_error_code_zip(error)) {
    case ZIP_ER_CRC:
    case ZIP_ER_ZLIB:
    case ZIP_ER_COMPRESSED_DATA:
    case ZIP_ER_INCONS:
    case ZIP_ER_EOF:
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
      return Code::kCorruption;
    case ZIP_ER_MEMORY:
      return Code::kFull;
    default:
      return Code::kIOError;
  }
}

Status Extract(const std::string& zip_path, zip_t* zip, const Entry& entry, const std::string& dest_dir, bool sync,
               std::vector<char>* buffer) {
  const std::string where = zip_path + ": entry '" + entry.name + "'";
  const std::string map_dir = dest_dir + "/" + entry.map;
  if (::mkdir(map_dir.c_str(), HomeDirectoryMode()) != 0) return ErrnoStatus(errno, "creating " + map_dir);
  const std::string path = map_dir + "/" + (entry.deletion ? std::string(kDeleteEntryName) : std::string(kDataFile));
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, HomeFileMode()));
  if (fd.get() < 0) return ErrnoStatus(errno, "creating " + path);
  ZipFilePtr file(zip_fopen_index(zip, entry.index, 0));
  if (file == nullptr) return ZipErrorStatus(zip_get_error(zip), Code::kCorruption, where);
  uint64_t written = 0;
  while (true) {
    zip_int64_t n = zip_fread(file.get(), buffer->data(), buffer->size());
    if (n < 0) {
      zip_error_t* error = zip_file_get_error(file.get());
      return Status(ReadErrorCode(error), where + ": " + zip_error_strerror(error));
    }
    if (n == 0) break;
    written += static_cast<uint64_t>(n);
    if (written > entry.size) {
      return Status::Corruption(where + ": inflates past its declared size of " + std::to_string(entry.size) +
                                " bytes");
    }
    PLANB_RETURN_IF_ERROR(WriteAll(fd.get(), buffer->data(), static_cast<size_t>(n), path));
  }
  if (written != entry.size) {
    return Status::Corruption(where + ": " + std::to_string(written) + " bytes, but it declares " +
                              std::to_string(entry.size));
  }
  if (sync && ::fsync(fd.get()) != 0) return ErrnoStatus(errno, "syncing " + path);
  if (::close(fd.Release()) != 0) return ErrnoStatus(errno, "closing " + path);
  return sync ? SyncPath(map_dir) : Status::Ok();
}

Status OpenForReading(const std::string& zip_path, int flags, ZipPtr* out, int* zip_error = nullptr) {
  int error_code = 0;
  out->reset(zip_open(zip_path.c_str(), flags, &error_code));
  if (zip_error != nullptr) *zip_error = *out != nullptr ? ZIP_ER_OK : error_code;
  if (*out != nullptr) return Status::Ok();
  zip_error_t error;
  zip_error_init_with_code(&error, error_code);
  const std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  switch (error_code) {
    case ZIP_ER_NOZIP: {
      // No end-of-central-directory record: a zip cut short still starts with a local header ("PK\3\4").
      char magic[4] = {0};
      FILE* f = std::fopen(zip_path.c_str(), "rb");
      size_t got = f != nullptr ? std::fread(magic, 1, sizeof(magic), f) : 0;
      if (f != nullptr) std::fclose(f);
      if (got == 4 && std::memcmp(magic, "PK\3\4", 4) == 0) {
        return Status::Corruption(zip_path + ": truncated or damaged zip (" + text + ")");
      }
      return Status::Invalid(zip_path + ": not a zip archive");
    }
    case ZIP_ER_INCONS:
    case ZIP_ER_CRC:
    case ZIP_ER_EOF:
      return Status::Corruption(zip_path + ": damaged zip (" + text + ")");
    case ZIP_ER_EXISTS:
      return Status::Invalid(zip_path + ": an entry name appears twice");
    case ZIP_ER_MULTIDISK:
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
      return Status::Invalid(zip_path + ": " + text);
    default:
      return Status::IOError("opening " + zip_path + ": " + text);
  }
}

// A zip's declared sizes bound what it inflates to (Extract stops an entry past its own): refused up front when
// they would leave less than the margin free on `dir`'s filesystem, so a zip bomb under max_batch_size cannot
// fill the disk the node's shards live on.
Status CheckFreeSpace(const std::string& zip_path, const std::string& dir, uint64_t needed, uint64_t min_free) {
  const DiskRoom room = MeasureDiskRoom(dir, min_free);
  if (room.Fits(needed)) return Status::Ok();
  return Status(Code::kFull, "not enough disk to extract " + zip_path + ": it inflates to " + std::to_string(needed) +
                                 " bytes, " + room.Describe());
}

Status CheckAndExtract(const std::string& zip_path, const std::string& dest_dir, const UnzipLimits& limits,
                       std::vector<std::string>* maps, std::string* batch_id, bool* replace, bool* created) {
  ZipPtr zip;
  int zip_error = ZIP_ER_OK;
  Status s = OpenForReading(zip_path, ZIP_RDONLY | ZIP_CHECKCONS, &zip, &zip_error);
  if (zip_error == ZIP_ER_EXISTS) {
    // libzip's consistency check refuses duplicate names without saying which; the rules below name it.
    PLANB_RETURN_IF_ERROR(OpenForReading(zip_path, ZIP_RDONLY, &zip));
    std::vector<Entry> entries;
    PLANB_RETURN_IF_ERROR(ZipChecker(zip_path, zip.get(), limits).Check(&entries));
    return s;
  }
  PLANB_RETURN_IF_ERROR(s);
  std::vector<Entry> entries;
  ZipChecker checker(zip_path, zip.get(), limits);
  PLANB_RETURN_IF_ERROR(checker.Check(&entries));
  if (limits.admit_map) {
    for (const Entry& entry : entries) PLANB_RETURN_IF_ERROR(limits.admit_map(entry.map));
  }

  const fs::path dest(dest_dir);
  const std::string parent = dest.parent_path().empty() ? "." : dest.parent_path().string();
  PLANB_RETURN_IF_ERROR(MakeDirectories(parent));
  uint64_t inflated = 0;
  for (const Entry& entry : entries) inflated += entry.size;  // bounded by limits.max_total_bytes: no overflow
  PLANB_RETURN_IF_ERROR(CheckFreeSpace(zip_path, parent, inflated, limits.min_free_bytes));
  if (::mkdir(dest_dir.c_str(), HomeDirectoryMode()) != 0) {
    if (errno == EEXIST) return Status::Invalid(dest_dir + ": already exists (extracting " + zip_path + ")");
    return ErrnoStatus(errno, "creating " + dest_dir);
  }
  *created = true;
  std::vector<char> buffer(kCopyBlock);
  for (const Entry& entry : entries) {
    PLANB_RETURN_IF_ERROR(Extract(zip_path, zip.get(), entry, dest_dir, limits.sync, &buffer));
  }
  if (limits.sync) {
    PLANB_RETURN_IF_ERROR(SyncPath(dest_dir));
    PLANB_RETURN_IF_ERROR(SyncPath(parent));
  }
  maps->clear();
  for (const Entry& entry : entries) maps->push_back(entry.map);
  if (batch_id != nullptr) *batch_id = checker.batch_id();
  if (replace != nullptr) *replace = checker.replace();
  return Status::Ok();
}

}  // namespace

bool IsValidBatchId(std::string_view id) {
  if (id.empty() || id.size() > kMaxBatchIdBytes) return false;
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

Status ZipBatch(const std::string& batch_dir, const std::string& zip_path, const ZipOptions& options) {
  if (!IsValidBatchId(options.batch_id)) return InvalidBatchId(batch_dir, options.batch_id);
  std::vector<std::string> maps;
  PLANB_RETURN_IF_ERROR(ListMaps(batch_dir, &maps));
  return PublishZip(zip_path, options,
                    [&](const std::string& temp) { return WriteBatchDirZip(batch_dir, maps, temp, options); });
}

Status ZipMapStream(const std::string& map, int data_fd, const std::string& zip_path, const ZipOptions& options) {
  Status s;
  if (!IsValidBatchId(options.batch_id)) s = InvalidBatchId("map " + map, options.batch_id);
  if (s.ok() && !IsValidMapName(map)) s = Status::Invalid("zipping map '" + Printable(map) + "': not a valid map name");
  if (s.ok() && options.replace) s = Status::Invalid("zipping map " + map + ": a stream is never a replacement");
  if (s.ok()) {
    s = PublishZip(zip_path, options, [&](const std::string& temp) {
      return WriteZip(temp, options, false, [&](zip_t* zip, const std::string& temp_path) {
        zip_source_t* source = MakeFdZipSource(zip, data_fd);
        if (source == nullptr) return ZipErrorStatus(zip_get_error(zip), Code::kInternal, temp_path);
        return AddEntry(zip, map + "/" + std::string(kDataFile), source, options.compress, temp_path);
      });
    });
  }
  Drain(data_fd);  // whatever libzip left unread, on an error
  return s;
}

Status ReadBatchId(const std::string& zip_path, const UnzipLimits& limits, std::string* batch_id,
                   std::vector<std::string>* maps) {
  ZipPtr zip;
  PLANB_RETURN_IF_ERROR(OpenForReading(zip_path, ZIP_RDONLY, &zip));
  std::vector<Entry> entries;
  ZipChecker checker(zip_path, zip.get(), limits);
  PLANB_RETURN_IF_ERROR(checker.Check(&entries));
  if (limits.admit_map) {
    for (const Entry& entry : entries) PLANB_RETURN_IF_ERROR(limits.admit_map(entry.map));
  }
  *batch_id = checker.batch_id();
  if (maps != nullptr) {
    maps->clear();
    for (const Entry& entry : entries) maps->push_back(entry.map);
  }
  return Status::Ok();
}

Status UnzipBatch(const std::string& zip_path, const std::string& dest_dir, const UnzipLimits& limits,
                  std::vector<std::string>* maps, std::string* batch_id, bool* replace) {
  // Refused up front so that a failure below never removes a directory that was there before.
  std::error_code ec;
  if (fs::exists(dest_dir, ec)) {
    return Status::Invalid(dest_dir + ": already exists (extracting " + zip_path + ")");
  }
  bool created = false;
  Status s = CheckAndExtract(zip_path, dest_dir, limits, maps, batch_id, replace, &created);
  if (!s.ok() && created) (void)RemoveTree(dest_dir);
  return s;
}

}  // namespace planb
