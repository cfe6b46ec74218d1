// Descriptors 0, 1 and 2 made safe before anything else opens a file. A program started with one of them closed
// (by a supervisor, or `planb load >&- 2>&-`) would otherwise hand that number to the next file it opens, a shard's
// data.mdb say, and its next line on stdout or stderr would be written into that file.
#pragma once

namespace planb {

// Opens /dev/null on each of descriptors 0 (read-only), 1 and 2 (write-only) that is closed; leaves open ones as
// they are. Call first in main(), before any thread or file. False when one could not be opened: the program
// should then stop with a failure status (it has nowhere safe to say why).
bool OpenClosedStandardDescriptors();

}  // namespace planb
