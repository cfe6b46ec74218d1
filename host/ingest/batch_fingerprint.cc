#include "host/ingest/batch_fingerprint.h"

#include <cstdio>

namespace planb {

BatchFingerprint::BatchFingerprint(std::string_view purpose) : state_(XXH3_createState(), XXH3_freeState) {
  XXH3_128bits_reset(state_.get());
  AddBytes("planb batch v1");
  AddBytes(purpose);
}

void BatchFingerprint::AddNumber(uint64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  XXH3_128bits_update(state_.get(), bytes, sizeof(bytes));
}

void BatchFingerprint::AddBytes(std::string_view bytes) {
  AddNumber(bytes.size());
  XXH3_128bits_update(state_.get(), bytes.data(), bytes.size());
}

void BatchFingerprint::Add(std::string_view map, const Record& record) {
  AddBytes(map);
  AddNumber(static_cast<uint64_t>(record.kind));
  const auto text = [](const planb::Bytes& b) { return std::string_view(reinterpret_cast<const char*>(b.data), b.size); };
  AddNumber(record.has_key);
  if (record.has_key) AddBytes(text(record.key));
  AddNumber(record.has_range);
  if (record.has_range) {
    AddBytes(text(record.range_from));
    AddBytes(text(record.range_to));
  }
  AddNumber(record.time_given);
  AddNumber(static_cast<uint64_t>(record.time_ms));
  AddNumber(record.has_timeout);
  if (record.has_timeout) AddNumber(static_cast<uint64_t>(record.timeout_ms));
  AddNumber(record.has_value);
  if (record.has_value) {
    AddNumber(static_cast<uint64_t>(record.value_type));
    AddBytes(text(record.value));
  }
}

std::string BatchFingerprint::BatchId() const {
  const XXH128_hash_t digest = XXH3_128bits_digest(state_.get());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(digest.high64),
                static_cast<unsigned long long>(digest.low64));
  return std::string("content:") + hex;
}

}  // namespace planb
