// A libzip source that reads a stream (a pipe's read end) to its end: for bytes that never sit in a file of their
// own, such as a snapshot's LMDB copy that another thread writes into a pipe (host/serve/snapshot_source.cc).
// Its size is known only at the end, so libzip writes the entry with a ZIP64 local header and fills in the sizes
// and CRC after the data; every zip reader we use (libzip) takes such an entry.
#pragma once

#include <zip.h>

namespace planb {

// A source for `zip` reading `fd` (not owned: the caller closes it) in blocks of its own, so that libzip's small
// reads do not each cost a system call. nullptr when libzip cannot make it (`zip`'s error says why). A read error
// fails zip_close with the errno.
zip_source_t* MakeFdZipSource(zip_t* zip, int fd);

}  // namespace planb
