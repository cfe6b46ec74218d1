// Copying bytes between files in the kernel (copy_file_range, read/write where it is refused), for files Plan B
// moves whole or in slices: the parts of a snapshot diff, and the snapshot a diff is applied to.
#pragma once

#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

// Copies `length` bytes of `in_fd` from `offset` to the current end of `out_fd` (appending). `in_path` and
// `out_path` name the files in errors. kCorruption when `in_fd` ends before `length` bytes; kFull for ENOSPC.
Status CopyFileBytes(int in_fd, uint64_t offset, uint64_t length, int out_fd, const std::string& in_path,
                     const std::string& out_path);

// Copies the regular file `from` to the new file `to` (O_EXCL: never over an existing file or a symlink; `from`
// is opened with O_NOFOLLOW) with HomeFileMode(), not synced: for scratch a caller syncs or renames itself.
Status CopyFileTo(const std::string& from, const std::string& to);

}  // namespace planb
