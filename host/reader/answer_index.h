// What the Reader's read indexes share: a copy of every answer of one version of a map, searched without LMDB,
// tied to the LMDB transaction it was read at. Two kinds: RangeAnswerIndex (ranged maps: flat segment arrays)
// and PointAnswerIndex (text-keyed maps: a hash table of their rows). Each is built only for maps whose store
// type promises that its answers are what the index reads (PluginDescriptor::answers_by_containing_ranges,
// answers_by_stored_keys), and copies the values, so answering needs no transaction.
//
// Never consulted for another version of the map: IsCurrent() compares the transaction the index was read at
// with the environment's last committed transaction (one read of LMDB's meta page). Any merge since (a new content
// version; any write at all) makes it not current, and lookups go to the store type until a new index is built
// (MapSlot). A snapshot environment never changes, so its index stays current for its life.
// Immutable once built; shared by every thread of the Reader.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "host/plugin_host/map_plugins.h"
#include "host/storage/map_env.h"
#include "planb/bytes.h"
#include "planb/status.h"
#include "planb/value_type.h"

namespace planb {

// The id of the last transaction committed to `env` (LMDB's meta page): what IsCurrent compares.
uint64_t LastCommittedTxnId(const MapEnv& env);

enum class ReadIndexKind { kNone, kRange, kPoint };

class AnswerIndex {
 public:
  enum class Answer { kFound, kMiss, kNotRead };

  virtual ~AnswerIndex() = default;

  // Hot path, no allocation. kFound sets `value` (a view into the index, valid while it is held) and `type`;
  // kMiss: the map has no answer for the key. kNotRead: the key is not in a form the index reads (an IPv6
  // address for an ipv4 map, a malformed one): ask the store type, which answers or refuses it.
  virtual Answer Find(std::string_view key, Bytes* value, ValueType* type) const = 0;
  // The same for a number map's key (kNotRead for maps keyed by text).
  virtual Answer FindNumber(int64_t key, Bytes* value, ValueType* type) const = 0;

  ReadIndexKind kind() const { return kind_; }
  // Whether the environment still holds exactly what the index was built from.
  bool IsCurrent() const { return LastCommittedTxnId(*env_) == txn_id_; }
  uint64_t txn_id() const { return txn_id_; }
  // Memory held, in bytes.
  uint64_t bytes() const { return bytes_; }

 protected:
  explicit AnswerIndex(ReadIndexKind kind) : kind_(kind) {}

  const ReadIndexKind kind_;
  std::shared_ptr<MapEnv> env_;
  uint64_t txn_id_ = 0;
  uint64_t bytes_ = 0;
};

// Which read index maps of `plugins` can have (kNone: their store type promises neither answer rule), whatever
// their read_index_max_size says.
ReadIndexKind ReadIndexKindOf(const MapPlugins& plugins);

// The read index of `env` as it is now. kNotSupported: the map can have none. kFull: it would take more than
// `max_bytes` (the map's read_index_max_size), named with the figures. `stop` (may be null): when it turns true
// during a long build (the Reader closing), the build ends early with an error saying so. Other errors are the
// map's (a row that does not decode, a broken promise, LMDB), naming it.
Status BuildAnswerIndex(std::shared_ptr<MapEnv> env, uint64_t max_bytes, const std::atomic<bool>* stop,
                        std::shared_ptr<const AnswerIndex>* out);

}  // namespace planb
