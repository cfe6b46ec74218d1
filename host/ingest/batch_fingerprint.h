// A load's default batch id, derived from what the stream holds: loading the same records again (the same file
// with the same options, after any failure) gives the same id, so every node that already merged the batch
// recognises it and nothing is counted twice (docs/storage-nodes.md, "Exactly once").
//
// The digest covers, per record in stream order: the map it goes to and every field of the Record (which optional
// fields it has, key, range, time, timeout, value and its type), texts length-prefixed, so that no two different
// streams hash the same bytes.
// The load's parameters that shape rows (effective time, column choices, --format) reach the digest through the
// records they produce. `purpose` separates batches that must never share an id though their records are equal
// (a load and, later, a replacement of a map's whole content).
#pragma once

#include <xxhash.h>

#include <memory>
#include <string>
#include <string_view>

#include "planb/store.h"

namespace planb {

class BatchFingerprint {
 public:
  explicit BatchFingerprint(std::string_view purpose);
  BatchFingerprint(const BatchFingerprint&) = delete;
  BatchFingerprint& operator=(const BatchFingerprint&) = delete;

  void Add(std::string_view map, const Record& record);
  // "content:" and the 128-bit XXH3 digest as 32 hex digits: a valid wire batch id (protocol.h).
  std::string BatchId();

 private:
  static constexpr size_t kFlushBytes = 64 * 1024;
  // Append to record_, the bytes of what is being added (hashed by Flush, in large updates).
  void AddBytes(std::string_view bytes);
  void AddNumber(uint64_t value);
  void Flush();

  std::string record_;  // reused: no allocation per record once it has grown past kFlushBytes plus a record
  // Allocated: the state's layout is xxHash's own (its static-linking section), not part of its stable API.
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state_;
};

}  // namespace planb
