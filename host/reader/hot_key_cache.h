// A thread's cache of the answers it looked up last, for maps keyed by text without lookup time (State under
// every scheme): event streams are skewed (a few clients, users and hosts make most events), and a key asked
// again answers from here with a hash and a compare instead of LMDB's B+tree walk.
//
// Correct by construction: such a map's answer is a function of the key and the map's data, so an entry carries
// the LMDB transaction id it was read at and answers only while the environment's last committed transaction is
// still that one (any merge since empties the cache in effect). Misses are cached too.
//
// Bounded: a direct-mapped table of fixed 256-byte slots, `bytes` in all (rounded down to a power of two of
// slots), allocated once; a key and value too long for a slot are not cached. Nothing is allocated per lookup.
// When a stream does not repeat itself (fewer than 1 in 16 lookups of a window hit), the cache stands aside for
// a while and then tries again, so uniform keys pay one branch, not a hash and a copy.
// One per thread and map (MapContext): not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "host/reader/key_hash.h"
#include "planb/bytes.h"
#include "planb/value_type.h"

namespace planb {

class HotKeyCache {
 public:
  static constexpr size_t kSlotSize = 256;

  explicit HotKeyCache(size_t bytes);

  // Starts a Lookup or a LookupMany: views handed out before it may be overwritten from now on (the Reader's
  // view lifetime), those handed out after it are kept until the next BeginCall.
  void BeginCall() { ++call_; }
  // Whether lookups should try the cache now (false while it stands aside); counts the lookup.
  bool Active();
  // A cached answer of `key` read at `txn_id`: true, with `found`, and when found `value` (valid until the next
  // BeginCall) and `type`.
  bool Find(std::string_view key, uint64_t hash, uint64_t txn_id, bool* found, Bytes* value, ValueType* type);
  // Remembers the answer read at `txn_id` (nothing when key and value do not fit a slot, or the slot's value was
  // handed out in this call).
  void Put(std::string_view key, uint64_t hash, uint64_t txn_id, bool found, Bytes value, ValueType type);

  static uint64_t Hash(std::string_view key) { return HashLookupKey(key); }
  size_t bytes() const { return slots_ * kSlotSize; }
  uint64_t hits() const { return hits_; }

 private:
  struct Slot {
    uint64_t hash;
    uint64_t txn_id;
    uint32_t call;  // the BeginCall in which Find last handed out this slot's value
    uint16_t key_size;
    uint16_t value_size;
    uint8_t state;  // kEmpty, kMiss, kFound
    uint8_t type;
    char bytes[kSlotSize - 26];  // the key, then the value
  };
  static_assert(sizeof(Slot) == kSlotSize, "a slot is one fixed size");

  enum : uint8_t { kEmpty = 0, kMiss = 1, kFound = 2 };
  static constexpr uint32_t kWindow = 1024;       // lookups judged together
  static constexpr uint32_t kAsideFor = 16384;    // lookups to stand aside for after a window of few hits

  std::unique_ptr<Slot[]> table_;
  size_t slots_ = 0;
  uint32_t window_lookups_ = 0;
  uint32_t window_hits_ = 0;
  uint32_t aside_ = 0;  // lookups left to stand aside for
  uint32_t call_ = 1;
  uint64_t hits_ = 0;
};

}  // namespace planb
