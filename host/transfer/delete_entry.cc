#include "host/transfer/delete_entry.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "host/common/log_text.h"

namespace planb {

namespace {
// A signed decimal int64, optional '-', digits only (no '+', spaces or leading zeros beyond "0").
bool ParseTimeMs(std::string_view digits, int64_t* out) {
  bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 19 || (digits.size() > 1 && digits.front() == '0')) return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (value > limit) return false;
  *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return !(negative && value == 0);  // "-0" is not how a time is written
}

constexpr std::string_view kTime = "time ";
constexpr std::string_view kAll = "all\n";
constexpr std::string_view kWhere = "where ";
constexpr size_t kQuoted = 80;  // of a refused entry's text, quoted in the message
}  // namespace

std::string DeleteEntryText(const DeleteEntry& entry) {
  return std::string(kTime) + std::to_string(entry.time_ms) + "\n" +
         (entry.all ? std::string(kAll) : std::string(kWhere) + entry.where + "\n");
}

Status ParseDeleteEntry(std::string_view text, DeleteEntry* out) {
  if (text.size() > kMaxDeleteEntryBytes) {
    return Status::Invalid("delete entry: " + std::to_string(text.size()) + " bytes, more than the limit of " +
                           std::to_string(kMaxDeleteEntryBytes));
  }
  *out = DeleteEntry();
  // The time line first: "time " and a signed decimal number of milliseconds, nothing else on the line.
  const size_t end_of_time = text.find('\n');
  if (text.substr(0, kTime.size()) != kTime || end_of_time == std::string_view::npos ||
      !ParseTimeMs(text.substr(kTime.size(), end_of_time - kTime.size()), &out->time_ms)) {
    return Status::Invalid("delete entry: no 'time <milliseconds>' line first (found " +
                           LogValue(text.substr(0, end_of_time), kQuoted) + ")");
  }
  text.remove_prefix(end_of_time + 1);
  if (text == kAll) {
    out->all = true;
    return Status::Ok();
  }
  if (text.substr(0, kWhere.size()) == kWhere && text.size() > kWhere.size() && text.back() == '\n') {
    std::string_view expression = text.substr(kWhere.size(), text.size() - kWhere.size() - 1);
    if (expression.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      return Status::Invalid("delete entry: 'where' without an expression");
    }
    out->where = std::string(expression);
    return Status::Ok();
  }
  return Status::Invalid("delete entry: not 'all' or 'where <expression>' on a line of its own (found " +
                         LogValue(text, kQuoted) + ")");
}

bool HasDeleteEntry(const std::string& map_dir) {
  struct stat st;
  const std::string path = map_dir + "/" + kDeleteEntryName;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status ReadDeleteEntry(const std::string& map_dir, DeleteEntry* out) {
  const std::string path = map_dir + "/" + kDeleteEntryName;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("reading " + path + ": cannot open");
  std::string text;
  // One byte past the limit is enough to refuse it.
  text.resize(kMaxDeleteEntryBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::IOError("reading " + path);
  text.resize(static_cast<size_t>(in.gcount()));
  return ParseDeleteEntry(text, out).WithContext(path);
}

}  // namespace planb
