// Placing all of a batch's keys in a shard's lookup table at once: KeyScheme::PlanMerge of the id schemes
// (`lookup_table`, and `variable`'s middle form). Internal to plugins/schemes.
//
// Key by key, each batch key costs a read of the shard's index at a random place (the index is keyed by hash),
// and a new key an index put at another: on a large shard, a page fault or two per key. Placed at once, the
// batch's keys (read from its `ids`, in id order) are sorted by hash and joined with the shard's index in one
// forward pass of a cursor; new keys take the shard's next ids in the batch's id order, so their rows still go to
// the end of the data table in the order the batch holds them; their index and id entries are written in one
// sorted pass of each table and the counter once. The plan then answers each batch row with its key and shard
// id, stepping forward with the rows (so a row costs no read of the batch's ids either). The tables end up as
// the key-by-key merge leaves them: the same ids and clash numbers, and nothing for a key without rows.
//
// Memory: about 56 bytes per batch key while planning and 24 kept for the merge (keys are views into the
// batch's map), no more than the batch's own index and id entries take on disk: bounded by the batch's size.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "id_index.h"
#include "planb/keyed_writer.h"  // PutFailureCode

namespace planb::scheme_parts {

// A batch id, its key and the shard id the key has (found or newly given).
struct IdPlacement {
  uint32_t batch_id;
  uint32_t shard_id;
  Bytes key;  // a view into the batch's ids
};

class IdMergePlan final : public MergePlan {
 public:
  // `placements` in increasing batch id order. Row prefixes are `tag` (0 or 1 byte) + id.
  IdMergePlan(Bytes tag, std::vector<IdPlacement> placements)
      : tag_size_(static_cast<uint32_t>(tag.size)),
        tag_(tag.size != 0 ? tag.data[0] : 0),
        placements_(std::move(placements)) {}

  Code PlaceRow(Bytes lmdb_key, Bytes, PlacedRow* out, ErrorBuffer*) noexcept override {
    const uint32_t prefix_size = tag_size_ + kIdBytes;
    if (lmdb_key.size < prefix_size || (tag_size_ != 0 && lmdb_key.data[0] != tag_)) {
      return Code::kNotFound;  // another form of key (variable's direct and hashed ones), or malformed
    }
    const uint32_t id = GetU32(lmdb_key.data + tag_size_);
    if (!At(next_, id) && !At(++next_, id)) {  // rows come in id order: this key's or the next one's
      const auto found = std::lower_bound(placements_.begin(), placements_.end(), id,
                                          [](const IdPlacement& p, uint32_t v) { return p.batch_id < v; });
      next_ = static_cast<size_t>(found - placements_.begin());
      if (!At(next_, id)) return Code::kNotFound;  // not in the batch's ids: DecodeRow refuses the row
    }
    const IdPlacement& placed = placements_[next_];
    out->key = placed.key;
    out->prefix_size = prefix_size;
    out->stored_key_size = 0;
    if (tag_size_ != 0) out->shard_prefix.bytes[0] = tag_;
    PutU32(out->shard_prefix.bytes + tag_size_, placed.shard_id);
    out->shard_prefix.size = prefix_size;
    return Code::kOk;
  }

  void Destroy() noexcept override { delete this; }

 private:
  ~IdMergePlan() = default;

  bool At(size_t i, uint32_t id) const { return i < placements_.size() && placements_[i].batch_id == id; }

  const uint32_t tag_size_;
  const uint8_t tag_;
  const std::vector<IdPlacement> placements_;
  size_t next_ = 0;
};

// Plans the merge of `batch` into `shard` for the keys of `batch`'s lookup table whose length is in
// [min_key, max_key] and that have rows under `tag` + id (the others are left to the key-by-key path): finds
// each in `shard`'s index or gives it the shard's next id, writing its index and id entries. Moves both tables'
// cursors. `*plan` is null when the batch has no such key.
inline Code PlanIdMerge(const IdIndex& index, const Table& batch, const Table& shard, Bytes tag, uint32_t min_key,
                        uint32_t max_key, MergePlan** plan, ErrorBuffer* error) {
  *plan = nullptr;
  if (batch.scheme_tables == nullptr || shard.scheme_tables == nullptr) {
    return Fail(error, Code::kInternal, "the lookup table was not opened");
  }
  return Guard(error, [&] {
    enum class State : uint8_t { kFound, kNew, kSame };  // kSame: the batch lists the key twice (malformed)
    struct Key {
      uint64_t hash;
      Bytes key;
      uint32_t batch_id;
      uint32_t shard_id;  // kFound, kNew: the shard's id; kSame: the position of the key's first entry
      uint16_t clash;     // kNew: its clash number in the shard's index
      State state;
    };
    std::vector<Key> keys;  // in batch id order

    // The batch's keys, from its ids (4-byte ids in increasing order; the 1-byte counter is skipped), those with
    // rows only: a key the batch lists without one gets nothing in the shard, as key by key. The rows are in id
    // order too, so `batch.cursor` only moves forward: the row it is on, or the next one (a State batch has one
    // row per key), mostly answers; a seek only when neither does.
    ScopedCursor batch_ids;
    int rc = mdb_cursor_open(batch.txn, batch.scheme_tables[1], &batch_ids.cursor);
    MDB_val k;
    MDB_val v;
    uint8_t row_prefix[1 + kIdBytes];
    if (tag.size != 0) row_prefix[0] = tag.data[0];
    const uint32_t row_prefix_size = static_cast<uint32_t>(tag.size) + kIdBytes;
    MDB_val row{0, nullptr};  // the row `batch.cursor` is on (none yet)
    MDB_val row_value;
    bool rows_left = true;
    // Whether `row` sorts before the rows under `row_prefix` (LMDB's order: bytes, then the shorter first).
    const auto before_prefix = [&] {
      const size_t common = std::min<size_t>(row.mv_size, row_prefix_size);
      const int order = std::memcmp(row.mv_data, row_prefix, common);
      return order < 0 || (order == 0 && row.mv_size < row_prefix_size);
    };
    for (rc = rc == MDB_SUCCESS ? mdb_cursor_get(batch_ids.cursor, &k, &v, MDB_FIRST) : rc;
         rc == MDB_SUCCESS && rows_left; rc = mdb_cursor_get(batch_ids.cursor, &k, &v, MDB_NEXT)) {
      if (k.mv_size != kIdBytes || v.mv_size < min_key || v.mv_size > max_key) continue;
      std::memcpy(row_prefix + tag.size, k.mv_data, kIdBytes);
      int at = MDB_SUCCESS;
      if (row.mv_data != nullptr && before_prefix()) at = mdb_cursor_get(batch.cursor, &row, &row_value, MDB_NEXT);
      if (at == MDB_SUCCESS && (row.mv_data == nullptr || before_prefix())) {
        row = MDB_val{row_prefix_size, row_prefix};
        at = mdb_cursor_get(batch.cursor, &row, &row_value, MDB_SET_RANGE);
      }
      if (at == MDB_NOTFOUND) {
        rows_left = false;  // past the last row: no later id has one either
        continue;
      }
      if (at != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading the batch's rows: %s", mdb_strerror(at));
      if (row.mv_size < row_prefix_size || std::memcmp(row.mv_data, row_prefix, row_prefix_size) != 0) {
        continue;  // no row under the id
      }
      const Bytes key(v);
      keys.push_back(Key{index.HashOf(key), key, GetU32(static_cast<const uint8_t*>(k.mv_data)), 0, 0, State::kNew});
    }
    if (!rows_left) rc = MDB_NOTFOUND;
    if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading the batch's lookup table: %s", mdb_strerror(rc));
    if (keys.empty()) return Code::kOk;

    // Joined with the shard's index in hash order (batch id order within a hash, as key by key would).
    // Sorted as (hash, position) pairs: the hash beside the position, not read through it.
    struct HashAt {
      uint64_t hash;
      uint32_t at;  // in `keys`
    };
    std::vector<HashAt> by_hash(keys.size());
    for (uint32_t i = 0; i < keys.size(); ++i) by_hash[i] = HashAt{keys[i].hash, i};
    std::sort(by_hash.begin(), by_hash.end(), [](const HashAt& a, const HashAt& b) {
      return a.hash != b.hash ? a.hash < b.hash : a.at < b.at;
    });
    ScopedCursor shard_index;
    rc = mdb_cursor_open(shard.txn, shard.scheme_tables[0], &shard_index.cursor);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening the lookup table: %s", mdb_strerror(rc));
    const uint32_t hash_bytes = index.hash_bytes();
    const uint32_t entry_key_size = hash_bytes + kClashBytes;
    uint8_t probe[kMaxHashBytes + kClashBytes];
    std::vector<Bytes> held;  // one hash's entries in the shard, by clash number: id + key
    uint64_t new_keys = 0;
    for (size_t group = 0; group < by_hash.size();) {
      const uint64_t hash = by_hash[group].hash;
      size_t end = group + 1;
      while (end < by_hash.size() && by_hash[end].hash == hash) ++end;
      index.WriteHashBytes(hash, probe);
      PutU16(probe + hash_bytes, 0);
      // Clash numbers are dense: a hash's entries are those from 0 up to the first number absent, as a lookup
      // reads them.
      held.clear();
      k = MDB_val{entry_key_size, probe};
      rc = mdb_cursor_get(shard_index.cursor, &k, &v, MDB_SET_RANGE);
      while (rc == MDB_SUCCESS && k.mv_size == entry_key_size && std::memcmp(k.mv_data, probe, hash_bytes) == 0 &&
             GetU16(static_cast<const uint8_t*>(k.mv_data) + hash_bytes) == held.size()) {
        if (v.mv_size < kIdBytes) {
          return Fail(error, Code::kCorruption, "lookup table entry of %zu bytes has no id", v.mv_size);
        }
        held.push_back(Bytes(v));
        rc = mdb_cursor_get(shard_index.cursor, &k, &v, MDB_NEXT);
      }
      if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
        return Fail(error, Code::kIOError, "reading the lookup table: %s", mdb_strerror(rc));
      }
      uint32_t free_clash = static_cast<uint32_t>(held.size());
      for (size_t i = group; i < end; ++i) {
        Key& key = keys[by_hash[i].at];
        const auto same_key = [&](Bytes entry) {
          return entry.size - kIdBytes == key.key.size &&
                 (key.key.size == 0 || std::memcmp(entry.data + kIdBytes, key.key.data, key.key.size) == 0);
        };
        const auto in_shard = std::find_if(held.begin(), held.end(), same_key);
        if (in_shard != held.end()) {
          key.state = State::kFound;
          key.shard_id = GetU32(in_shard->data);
          continue;
        }
        for (size_t j = group; j < i && key.state == State::kNew; ++j) {
          const Key& earlier = keys[by_hash[j].at];
          if (earlier.state != State::kSame && earlier.key == key.key) {
            key.state = State::kSame;
            key.shard_id = by_hash[j].at;
          }
        }
        if (key.state == State::kSame) continue;
        if (free_clash > kMaxClash) {
          return Fail(error, Code::kFull, "more than %u keys share one %u-bit hash in the lookup table; raise hash_bits",
                      kMaxClash + 1, index.hash_bits());
        }
        key.clash = static_cast<uint16_t>(free_clash++);
        ++new_keys;
      }
      group = end;
    }

    // New keys take the next ids in batch id order.
    ScopedCursor shard_ids;
    rc = mdb_cursor_open(shard.txn, shard.scheme_tables[1], &shard_ids.cursor);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening the lookup table: %s", mdb_strerror(rc));
    uint64_t next = 0;
    const Code counted = IdIndex::ReadNextId(shard_ids.cursor, &next, error);
    if (counted != Code::kOk) return counted;
    if (next > kIdCount || new_keys > kIdCount - next) {
      return Fail(error, Code::kFull, "the lookup table is full (%llu ids)", static_cast<unsigned long long>(kIdCount));
    }
    for (Key& key : keys) {
      if (key.state == State::kNew) key.shard_id = static_cast<uint32_t>(next++);
    }
    for (Key& key : keys) {
      if (key.state == State::kSame) key.shard_id = keys[key.shard_id].shard_id;
    }

    // Their entries: the index's in hash order, the ids' in id order, each through one cursor; the counter once.
    SortedPuts index_puts{shard_index.cursor};
    SortedPuts id_puts{shard_ids.cursor};
    for (const HashAt& sorted : by_hash) {
      const Key& key = keys[sorted.at];
      if (key.state != State::kNew) continue;
      index.WriteHashBytes(key.hash, probe);
      PutU16(probe + hash_bytes, key.clash);
      k = MDB_val{entry_key_size, probe};
      v = MDB_val{kIdBytes + key.key.size, nullptr};
      rc = index_puts.Put(&k, &v, MDB_NOOVERWRITE | MDB_RESERVE);
      if (rc == MDB_KEYEXIST) {
        return Fail(error, Code::kCorruption, "the lookup table's clash numbers under one hash are not dense");
      }
      if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing the lookup table: %s", mdb_strerror(rc));
      auto* entry = static_cast<uint8_t*>(v.mv_data);
      PutU32(entry, key.shard_id);
      if (key.key.size != 0) std::memcpy(entry + kIdBytes, key.key.data, key.key.size);
    }
    uint8_t id[kIdBytes];
    for (const Key& key : keys) {
      if (key.state != State::kNew) continue;
      PutU32(id, key.shard_id);
      k = MDB_val{kIdBytes, id};
      v = key.key.mdb();
      rc = id_puts.Put(&k, &v, 0);
      if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing the lookup table: %s", mdb_strerror(rc));
    }
    if (new_keys != 0) {
      uint8_t following[kCounterBytes];
      PutU64(following, next);
      v = MDB_val{kCounterBytes, following};
      MDB_val counter_key = IdIndex::NextIdKey();
      rc = id_puts.Put(&counter_key, &v, 0);
      if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing the lookup table: %s", mdb_strerror(rc));
    }

    std::vector<IdPlacement> placements;
    placements.reserve(keys.size());
    for (const Key& key : keys) placements.push_back(IdPlacement{key.batch_id, key.shard_id, key.key});
    keys = std::vector<Key>();  // freed before the merge
    *plan = new IdMergePlan(tag, std::move(placements));
    return Code::kOk;
  });
}

}  // namespace planb::scheme_parts
