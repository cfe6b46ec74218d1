#include "host/transfer/delete_entry.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "host/common/log_text.h"

namespace planb {

namespace {
constexpr std::string_view kAll = "all\n";
constexpr std::string_view kWhere = "where ";
constexpr size_t kQuoted = 80;  // of a refused entry's text, quoted in the message
}  // namespace

std::string DeleteEntryText(const DeleteEntry& entry) {
  return entry.all ? std::string(kAll) : std::string(kWhere) + entry.where + "\n";
}

Status ParseDeleteEntry(std::string_view text, DeleteEntry* out) {
  if (text.size() > kMaxDeleteEntryBytes) {
    return Status::Invalid("delete entry: " + std::to_string(text.size()) + " bytes, more than the limit of " +
                           std::to_string(kMaxDeleteEntryBytes));
  }
  *out = DeleteEntry();
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
