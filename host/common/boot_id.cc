#include "host/common/boot_id.h"

#include <cctype>
#include <mutex>

#include "host/common/file_util.h"

namespace planb {

namespace {

constexpr char kBootIdPath[] = "/proc/sys/kernel/random/boot_id";

Status ReadBootId(std::string* out) {
  std::string text;
  PLANB_RETURN_IF_ERROR(ReadSmallFile(kBootIdPath, &text));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  bool well_formed = text.size() == 36;
  for (const char c : text) well_formed = well_formed && (std::isxdigit(static_cast<unsigned char>(c)) || c == '-');
  if (!well_formed) return Status::IOError(std::string(kBootIdPath) + ": not a boot id (" + std::to_string(text.size()) + " bytes)");
  *out = std::move(text);
  return Status::Ok();
}

}  // namespace

Status CurrentBootId(std::string* out) {
  static std::once_flag once;
  static Status status;
  static std::string id;
  std::call_once(once, [] { status = ReadBootId(&id); });
  if (status.ok()) *out = id;
  return status;
}

}  // namespace planb
