// This machine's boot: the kernel's random id of the current boot (/proc/sys/kernel/random/boot_id), new at every
// boot. Data written without fsync survives the crash of the process that wrote it (it is in the page cache), but
// not a reboot that came before the kernel wrote it back; a file marked with the boot it was written in tells the
// two apart: a mark from another boot means the data may be partly lost.
#pragma once

#include <string>

#include "planb/status.h"

namespace planb {

// The current boot's id (36 characters: hex digits and dashes), read once per process. kIOError when the kernel
// does not say (no /proc): callers then sync as they would without the mark.
Status CurrentBootId(std::string* out);

}  // namespace planb
