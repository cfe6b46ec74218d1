// The key-scheme interface: how a user's text key becomes the leading bytes (the "prefix") of LMDB keys.
// A store type appends its own fixed-size suffix (an effective time, session bounds) after the prefix, and puts
// the scheme's "stored key" at the start of every row value, followed by its own payload:
//
//   LMDB key   = prefix(key) + store suffix
//   LMDB value = stored key (scheme-defined, may be empty) + store payload
//
// Thread-safety: a scheme instance is immutable after creation; every method may be called from many threads.
// All methods are noexcept; failures return a Code and a message in the host's ErrorBuffer.
#pragma once

#include <cstdint>

#include "planb/bytes.h"
#include "planb/status.h"
#include "planb/table.h"

namespace planb {

enum class Intent : uint32_t { kRead = 0, kWrite = 1 };

struct KeyPrefix {
  uint32_t size = 0;
  uint8_t bytes[kMaxLmdbKeySize];
  Bytes view() const { return Bytes(bytes, size); }
};

struct Resolved {
  KeyPrefix prefix;
  // The value of the first row under `prefix` when the scheme read it to resolve the key (null data otherwise).
  // Valid until the transaction ends.
  Bytes first_value;
};

class KeyScheme {
 public:
  // Finds the prefix of `key`'s rows in `table`. Returns kOk when the prefix is resolved (rows may or may not
  // exist under it unless `first_value` is set), kNotFound (kRead only) when the scheme knows no row holds `key`,
  // kInvalidArgument for a key the scheme cannot store (e.g. too long). For kWrite, `prefix` is where rows of
  // `key` belong, allocating one if needed. Allocates nothing for kRead.
  virtual Code Resolve(const Table& table, Bytes key, Intent intent, Resolved* out,
                       ErrorBuffer* error) const noexcept = 0;

  // Bytes this scheme puts at the start of each row value for `key` resolved as `resolved` (in the table the
  // row goes to: a scheme may store something local to that table, e.g. an id it allocated), and writes them.
  virtual uint32_t StoredKeySize(const Resolved& resolved, Bytes key) const noexcept = 0;
  virtual void WriteStoredKey(const Resolved& resolved, Bytes key, uint8_t* out) const noexcept = 0;

  // Recovers the user key of a row and where the store's parts start: `prefix_size` bytes of `lmdb_key` and
  // `stored_key_size` bytes of `value` belong to the scheme. Views are valid until the transaction ends.
  virtual Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                         uint32_t* stored_key_size, ErrorBuffer* error) const noexcept = 0;

  // Everything about this instance that changes the bytes it writes (e.g. "hash_bits=64"); recorded in each
  // shard's meta table and compared at open, so a shard is never read with another layout.
  virtual Bytes Layout() const noexcept = 0;

 protected:
  ~KeyScheme() = default;  // destroyed through the plugin's descriptor, by the module that made it
};

}  // namespace planb
