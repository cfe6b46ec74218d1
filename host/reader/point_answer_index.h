// The Reader's read index of a text-keyed map: every row's key and answer in one block of memory, grouped by hash
// bucket, instead of the store type's Get walking LMDB's B+tree (about four pages, and several cache lines inside
// each, for a key that misses every cache). A lookup hashes the key (XXH3), reads where its bucket starts in a
// small directory (4 bytes a bucket, two to four rows a bucket: about 1.5 bytes a row, so that it stays in the CPU's
// last-level cache for maps of millions of keys) and walks the bucket's entries, each its key and then its value,
// side by side in memory: one miss to memory for most lookups, where a hash table of pointers costs two. Batches
// (LookupMany) hash every key first and prefetch directory and bucket a few keys ahead (Prefetch /
// PrefetchEntry), so the misses of several keys overlap.
//
// Which maps: those whose store type promises that its rows are its answers (PluginDescriptor::
// answers_by_stored_keys, SDK 7.10: State) and that have no lookup time. Built from one read transaction by one
// scan of the map's rows through the store type's DecodeRow, then laid out bucket by bucket; a key that the scan
// yields twice breaks the promise and fails the build (lookups then go to the store type). Keys the index does not
// read (empty, or longer than any stored key) go to the store type too.
//
// Memory: per row 8 bytes of header plus its key and value, rounded up to 8, and the directory; bounded by the
// map's read_index_max_size, checked while the rows are read. A build holds the rows twice for a moment (as read,
// then in bucket order).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "host/reader/anonymous_memory.h"
#include "host/reader/answer_index.h"
#include "host/reader/key_hash.h"

namespace planb {

class PointAnswerIndex final : public AnswerIndex {
 public:
  static bool Eligible(const MapPlugins& plugins);

  // See BuildAnswerIndex (answer_index.h) for the errors.
  static Status Build(std::shared_ptr<MapEnv> env, uint64_t max_bytes, const std::atomic<bool>* stop,
                      std::shared_ptr<const PointAnswerIndex>* out);

  Answer Find(std::string_view key, Bytes* value, ValueType* type) const override {
    if (!Reads(key)) return Answer::kNotRead;
    return FindHashed(key, Hash(key), value, type);
  }
  Answer FindNumber(int64_t, Bytes*, ValueType*) const override { return Answer::kNotRead; }

  // The parts of Find, for batches. Whether the index reads `key` at all (else ask the store type).
  bool Reads(std::string_view key) const { return !key.empty() && key.size() <= longest_key_; }
  static uint64_t Hash(std::string_view key) { return HashLookupKey(key); }
  // Starts loading the directory entry of `hash`'s bucket into the cache.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&directory_[hash & mask_]); }
  // Starts loading the first entries of `hash`'s bucket. REQUIRES: its directory entry is in the cache or on its
  // way (Prefetch), or this waits for it.
  void PrefetchEntry(uint64_t hash) const {
    const uint8_t* first = arena_.data() + uint64_t{directory_[hash & mask_]} * 8;
    __builtin_prefetch(first);
    __builtin_prefetch(first + 64);
  }
  // Find with the key's Hash. REQUIRES: Reads(key).
  Answer FindHashed(std::string_view key, uint64_t hash, Bytes* value, ValueType* type) const {
    const uint32_t* bucket = &directory_[hash & mask_];
    const uint8_t* entry = arena_.data() + uint64_t{bucket[0]} * 8;
    const uint8_t* const end = arena_.data() + uint64_t{bucket[1]} * 8;
    while (entry < end) {
      uint32_t head = 0;
      uint32_t value_size = 0;
      std::memcpy(&head, entry, 4);
      std::memcpy(&value_size, entry + 4, 4);
      const uint32_t key_size = head & kKeySizeMask;
      if (key_size == key.size() && std::memcmp(entry + kEntryHead, key.data(), key.size()) == 0) {
        *value = Bytes(entry + kEntryHead + key_size, value_size);
        *type = static_cast<ValueType>(head >> 24);
        return Answer::kFound;
      }
      entry += EntrySize(key_size, value_size);
    }
    return Answer::kMiss;
  }

  uint64_t rows() const { return rows_; }

 private:
  // An entry: key size (24 bits) and value type (8 bits), value size (32 bits), the key, the value; 8-aligned.
  static constexpr uint32_t kEntryHead = 8;
  static constexpr uint32_t kKeySizeMask = (1u << 24) - 1;
  static uint64_t EntrySize(uint64_t key_size, uint64_t value_size) {
    return (kEntryHead + key_size + value_size + 7) & ~uint64_t{7};
  }

  // The key of the entry at `entry`; returns the entry's size.
  static uint64_t EntryKey(const uint8_t* entry, std::string_view* key) {
    uint32_t head = 0;
    uint32_t value_size = 0;
    std::memcpy(&head, entry, 4);
    std::memcpy(&value_size, entry + 4, 4);
    *key = std::string_view(reinterpret_cast<const char*>(entry + kEntryHead), head & kKeySizeMask);
    return EntrySize(key->size(), value_size);
  }

  PointAnswerIndex() : AnswerIndex(ReadIndexKind::kPoint) {}
  // Lays the entries of `rows` (`bytes` long, as read) out bucket by bucket into arena_ and directory_.
  Status Arrange(const uint8_t* rows, uint64_t bytes, uint64_t count, const std::string& map, const std::string& type);

  AnonymousMemory arena_;    // the entries, bucket after bucket
  AnonymousMemory buckets_;  // the directory: where each bucket starts in arena_, in 8-byte units, and the end
  const uint32_t* directory_ = nullptr;
  uint64_t mask_ = 0;  // buckets - 1
  uint64_t rows_ = 0;
  size_t longest_key_ = 0;
};

}  // namespace planb
