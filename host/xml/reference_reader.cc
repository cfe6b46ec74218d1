#include "host/xml/reference_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "host/xml/reference_parser.h"

namespace planb {
namespace {

// Input is read and handed to expat in pieces of this size, so memory does not grow with the file (expat keeps
// only the unfinished token, and the parser only the current element).
constexpr size_t kChunkSize = 64 * 1024;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

Status ReadReferenceDataFile(const std::string& path, int64_t effective_time_ms, const RecordHandler& handler) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  ReferenceParser parser(path, effective_time_ms, handler);
  std::unique_ptr<char[]> buffer(new char[kChunkSize]);
  while (true) {
    const size_t n = std::fread(buffer.get(), 1, kChunkSize, file.get());
    if (n < kChunkSize && std::ferror(file.get())) {
      return Status::IOError(path + ": read failed: " + std::strerror(errno));
    }
    const bool last = n < kChunkSize;  // short read without error = end of file
    PLANB_RETURN_IF_ERROR(parser.Feed(buffer.get(), n, last));
    if (last) return Status::Ok();
  }
}

Status ReadReferenceData(std::string_view name, std::string_view xml, int64_t effective_time_ms,
                         const RecordHandler& handler) {
  ReferenceParser parser(std::string(name), effective_time_ms, handler);
  // Pieces, as for files: expat copies unparsed input into its own buffer, which would otherwise grow to the
  // size of the document.
  do {
    const size_t n = std::min(xml.size(), kChunkSize);
    PLANB_RETURN_IF_ERROR(parser.Feed(xml.data(), n, n == xml.size()));
    xml.remove_prefix(n);
  } while (!xml.empty());
  return Status::Ok();
}

}  // namespace planb
