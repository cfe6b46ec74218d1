// The XXH3-64 of a whole file, as uploads, snapshot offers and retained-batch offers state it (docs/protocol.md).
#pragma once

#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

// Reads `fd` (open for reading, at its start) to the end: `*size` bytes hashing to `*checksum`. `path` names the
// file in errors.
Status HashOpenFile(int fd, const std::string& path, uint64_t* size, uint64_t* checksum);
// Opens `path` (never through a symlink at its last component) and hashes it.
Status HashFile(const std::string& path, uint64_t* size, uint64_t* checksum);

}  // namespace planb
