#include "host/reader/point_answer_index.h"

#include <lmdb.h>

#include <algorithm>

#include "host/common/log_text.h"
#include "host/query/map_scan.h"
#include "host/storage/map_reader.h"

namespace planb {
namespace {

// Buckets for `rows` entries: a power of two, with two to four rows each on average (one for fewer than eight).
uint64_t BucketCount(uint64_t rows) {
  uint64_t count = 1;
  while (count * 4 < rows) count <<= 1;
  return count;
}

}  // namespace

bool PointAnswerIndex::Eligible(const MapPlugins& plugins) {
  const PluginDescriptor& d = plugins.type_descriptor();
  if (!d.answers_by_stored_keys || d.lookup_uses_time || d.lookup_key != LookupKeyKind::kText) return false;
  for (uint32_t i = 0; i < d.field_count; ++i) {
    // A promise broken: answers would have more than a value.
    if (d.fields[i].field == RowField::kOwn || d.fields[i].field == RowField::kStart) return false;
  }
  return true;
}

Status PointAnswerIndex::Build(std::shared_ptr<MapEnv> env, uint64_t max_bytes, const std::atomic<bool>* stop,
                               std::shared_ptr<const PointAnswerIndex>* out) {
  out->reset();
  const std::string& map = env->plugins().config().name;
  const std::string& type = env->plugins().type_descriptor().name;
  if (!Eligible(env->plugins())) {
    return Status(Code::kNotSupported, "map " + map + " (type " + type +
                                           ") has no read index: its store type does not promise that its rows are "
                                           "its answers");
  }
  // The rows as they are read, before Arrange puts them in bucket order.
  AnonymousMemory read;
  if (!read.Reserve(max_bytes)) {
    return Status(Code::kFull, "map " + map + ": cannot reserve read_index_max_size (" + std::to_string(max_bytes) +
                                   " bytes) of address space for its read index");
  }
  auto index = std::shared_ptr<PointAnswerIndex>(new PointAnswerIndex());
  MapReader reader;
  PLANB_RETURN_IF_ERROR(reader.Open(env));
  index->txn_id_ = mdb_txn_id(reader.table().txn);
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(reader.table().txn, env->data()).WithContext(env->path()));

  uint64_t used = 0;
  uint64_t rows = 0;
  size_t longest = 0;
  uint8_t* arena = read.data();
  Status row_error;
  ScanRequest request;
  ScanStats stats;
  const Status scanned = ScanMapInTxn(
      *env, reader.table().txn, cursor.get(), request,
      [&](const Row& row, Bytes, Bytes) {
        if ((rows & 0xFFFF) == 0 && stop != nullptr && stop->load(std::memory_order_relaxed)) {
          row_error = Status::Internal("map " + map + ": building its read index stopped: the Reader is closing");
          return false;
        }
        if (row.key.size > kKeySizeMask || row.value.size > UINT32_MAX) {
          row_error = Status(Code::kNotSupported, "map " + map + ": a row of a " + std::to_string(row.key.size) +
                                                      "-byte key and a " + std::to_string(row.value.size) +
                                                      "-byte value is too large for a read index");
          return false;
        }
        const uint64_t entry = EntrySize(row.key.size, row.value.size);
        if (used + entry + (BucketCount(rows + 1) + 1) * 4 > max_bytes) {
          row_error =
              Status(Code::kFull, "map " + map + ": its read index would take more than read_index_max_size (" +
                                      std::to_string(max_bytes) + " bytes) after " + std::to_string(rows) + " rows");
          return false;
        }
        uint8_t* e = arena + used;
        const uint32_t head =
            static_cast<uint32_t>(row.key.size) | (uint32_t{static_cast<uint8_t>(row.value_type)} << 24);
        const uint32_t value_size = static_cast<uint32_t>(row.value.size);
        std::memcpy(e, &head, 4);
        std::memcpy(e + 4, &value_size, 4);
        if (row.key.size != 0) std::memcpy(e + kEntryHead, row.key.data, row.key.size);
        if (row.value.size != 0) std::memcpy(e + kEntryHead + row.key.size, row.value.data, row.value.size);
        used += entry;
        longest = std::max<size_t>(longest, row.key.size);
        ++rows;
        return true;
      },
      &stats);
  PLANB_RETURN_IF_ERROR(scanned.WithContext("map " + map + ": building the read index"));
  PLANB_RETURN_IF_ERROR(row_error);
  if (used / 8 > UINT32_MAX) {
    return Status(Code::kFull, "map " + map + ": its rows take more than 32 GiB, too much for a read index");
  }
  PLANB_RETURN_IF_ERROR(index->Arrange(arena, used, rows, map, type));
  index->rows_ = rows;
  index->longest_key_ = longest;
  index->bytes_ = used + (index->mask_ + 2) * 4;
  index->env_ = std::move(env);
  *out = std::move(index);
  return Status::Ok();
}

// A counting sort by bucket: the directory first counts each bucket's 8-byte units, then (summed) says where each
// starts, serves as the bucket's write position while entries are copied, and is shifted back to the starts.
Status PointAnswerIndex::Arrange(const uint8_t* rows, uint64_t bytes, uint64_t count, const std::string& map,
                                 const std::string& type) {
  const uint64_t buckets = BucketCount(count);
  mask_ = buckets - 1;
  if (!buckets_.Reserve((buckets + 1) * 4) || !arena_.Reserve(bytes)) {
    return Status(Code::kFull, "map " + map + ": no memory for its read index (" + std::to_string(bytes) + " bytes)");
  }
  uint32_t* directory = reinterpret_cast<uint32_t*>(buckets_.data());
  std::string_view key;
  for (uint64_t offset = 0; offset < bytes;) {
    const uint64_t size = EntryKey(rows + offset, &key);
    directory[(Hash(key) & mask_) + 1] += static_cast<uint32_t>(size / 8);
    offset += size;
  }
  for (uint64_t b = 1; b <= buckets; ++b) directory[b] += directory[b - 1];
  uint8_t* arena = arena_.data();
  for (uint64_t offset = 0; offset < bytes;) {
    const uint64_t size = EntryKey(rows + offset, &key);
    uint32_t& position = directory[Hash(key) & mask_];
    std::memcpy(arena + uint64_t{position} * 8, rows + offset, size);
    position += static_cast<uint32_t>(size / 8);
    offset += size;
  }
  for (uint64_t b = buckets; b > 0; --b) directory[b] = directory[b - 1];
  directory[0] = 0;
  directory_ = directory;

  // The promise of one row per key, checked: a key twice would answer as whichever came first.
  for (uint64_t b = 0; b < buckets; ++b) {
    const uint64_t end = uint64_t{directory[b + 1]} * 8;
    for (uint64_t i = uint64_t{directory[b]} * 8; i < end;) {
      const uint64_t next = i + EntryKey(arena + i, &key);
      std::string_view other;
      for (uint64_t j = next; j < end;) {
        const uint64_t size = EntryKey(arena + j, &other);
        if (other == key) {
          return Status::Corruption("map " + map + ": store type " + type +
                                    " promises one row per key (answers_by_stored_keys), but key " + LogValue(key) +
                                    " is in two rows; no read index");
        }
        j += size;
      }
      i = next;
    }
  }
  return Status::Ok();
}

}  // namespace planb
