// A storage node's descriptors: it raises its soft open-files limit to the hard one at start (as servers such as
// nginx and Redis do), and caps the connections it accepts so that they leave room under that limit for shards,
// merges, uploads and served snapshots.
#pragma once

#include <cstdint>

namespace planb {

// Raises the process's soft open-files limit (RLIMIT_NOFILE) to its hard limit. Returns the soft limit now in
// force, and in `*before` the one before (equal when nothing changed or the call failed).
uint64_t RaiseOpenFilesLimit(uint64_t* before);

// The connection cap under the soft limit `open_files`: `configured`, lowered to half of what remains after
// `reserved` descriptors; never below kMinConnectionCap.
inline constexpr uint32_t kMinConnectionCap = 16;
// Descriptors a storage node keeps for itself besides its maps' (4 each): 64 upload part files, 64 served
// snapshot zips, merges and their verifier children, its log, ZeroMQ's own.
inline constexpr uint64_t kReservedDescriptors = 256;
uint32_t ConnectionCapUnder(uint64_t open_files, uint64_t reserved, uint32_t configured);

}  // namespace planb
