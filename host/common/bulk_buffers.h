// The allocator's policy for the megabyte buffers of bulk transfers (upload chunks, snapshot and diff chunks).
//
// Every chunk of an upload is a ZeroMQ message of about 1 MiB, allocated by whoever makes it (the sender reading
// the zip, ZeroMQ's decoder on the receiver, libsodium's box with CURVE) and freed once it is sent or written. By
// default glibc serves such a block with mmap, or returns the top of its heap to the kernel once 128 KiB or more of
// it is free, so each chunk's pages were new to the process: the kernel faulted and zeroed 256 pages per chunk
// before a byte was copied. Profiled on bench/upload_bench, those page faults and the copy into fresh pages were
// over a third of a 256 MiB upload, which then took 3.1-3.6x a file copy; with blocks kept in the heap, 1.2-1.3x
// (docs/performance.md, "Uploads").
#pragma once

namespace planb {

// Blocks below 4 MiB come from the heap, and a heap keeps up to 64 MiB of free memory at its top before giving it
// back: enough for a window of chunks in flight each way, a bounded amount per allocator arena. Leaves the
// allocator alone when GLIBC_TUNABLES sets a malloc tunable (the operator's choice wins). Call once, early in a
// program's main (planb does; a library never changes its host's allocator).
void KeepBulkBuffersInProcess();

}  // namespace planb
