#include "host/ingest/batch_fingerprint.h"

#include <cstdio>

namespace planb {

BatchFingerprint::BatchFingerprint(std::string_view purpose) : state_(XXH3_createState(), XXH3_freeState) {
  XXH3_128bits_reset(state_.get());
  AddBytes("planb batch v1");
  AddBytes(purpose);
}

void BatchFingerprint::AddNumber(uint64_t value) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  record_.append(bytes, sizeof(bytes));
}

void BatchFingerprint::AddBytes(std::string_view bytes) {
  // Lengths as 4 bytes: a record's texts are far below 4 GiB (the readers cap them), and fewer bytes hash faster.
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  char length[4];
  for (int i = 0; i < 4; ++i) length[i] = static_cast<char>(size >> (8 * i));
  record_.append(length, sizeof(length));
  record_.append(bytes.data(), bytes.size());
}

void BatchFingerprint::Add(std::string_view map, const Record& record) {
  // Records are laid out in a reused buffer and hashed 64 KiB at a time: a dozen small updates per record cost
  // more than the hashing itself (the stream of bytes hashed, and so the id, is the same either way). One byte
  // says which optional fields follow, so absent ones take no room.
  const auto text = [](const planb::Bytes& b) { return std::string_view(reinterpret_cast<const char*>(b.data), b.size); };
  const char flags = static_cast<char>((record.has_key ? 1 : 0) | (record.has_range ? 2 : 0) |
                                       (record.time_given ? 4 : 0) | (record.has_timeout ? 8 : 0) |
                                       (record.has_value ? 16 : 0));
  AddBytes(map);
  record_.push_back(static_cast<char>(record.kind));
  record_.push_back(flags);
  if (record.has_key) AddBytes(text(record.key));
  if (record.has_range) {
    AddBytes(text(record.range_from));
    AddBytes(text(record.range_to));
  }
  AddNumber(static_cast<uint64_t>(record.time_ms));
  if (record.has_timeout) AddNumber(static_cast<uint64_t>(record.timeout_ms));
  if (record.has_value) {
    record_.push_back(static_cast<char>(record.value_type));
    AddBytes(text(record.value));
  }
  if (record_.size() >= kFlushBytes) Flush();
}

void BatchFingerprint::Flush() {
  XXH3_128bits_update(state_.get(), record_.data(), record_.size());
  record_.clear();
}

std::string BatchFingerprint::BatchId() {
  Flush();
  const XXH128_hash_t digest = XXH3_128bits_digest(state_.get());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(digest.high64),
                static_cast<unsigned long long>(digest.low64));
  return std::string("content:") + hex;
}

}  // namespace planb
