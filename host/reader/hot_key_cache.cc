#include "host/reader/hot_key_cache.h"

#include <cstring>

namespace planb {

HotKeyCache::HotKeyCache(size_t bytes) {
  size_t slots = 1;
  while (slots * 2 * kSlotSize <= bytes) slots *= 2;
  slots_ = slots;
  table_.reset(new Slot[slots_]());  // value-initialised: every slot kEmpty
}

bool HotKeyCache::Active() {
  if (aside_ > 0) {
    --aside_;
    return false;
  }
  if (++window_lookups_ == kWindow) {
    if (window_hits_ * 16 < kWindow) aside_ = kAsideFor;  // this stream does not repeat itself (now)
    window_lookups_ = 0;
    window_hits_ = 0;
  }
  return true;
}

bool HotKeyCache::Find(std::string_view key, uint64_t hash, uint64_t txn_id, bool* found, Bytes* value,
                       ValueType* type) {
  Slot& slot = table_[hash & (slots_ - 1)];
  if (slot.state == kEmpty || slot.hash != hash || slot.txn_id != txn_id || slot.key_size != key.size() ||
      std::memcmp(slot.bytes, key.data(), key.size()) != 0) {
    return false;
  }
  *found = slot.state == kFound;
  if (*found) {
    *value = Bytes(reinterpret_cast<const uint8_t*>(slot.bytes) + slot.key_size, slot.value_size);
    *type = static_cast<ValueType>(slot.type);
    slot.call = call_;  // kept for this call's views
  }
  ++window_hits_;
  ++hits_;
  return true;
}

void HotKeyCache::Put(std::string_view key, uint64_t hash, uint64_t txn_id, bool found, Bytes value, ValueType type) {
  const size_t value_size = found ? value.size : 0;
  if (key.size() + value_size > sizeof(Slot::bytes)) return;
  Slot& slot = table_[hash & (slots_ - 1)];
  if (slot.state == kFound && slot.call == call_) return;  // a result of this call points into it
  slot.hash = hash;
  slot.txn_id = txn_id;
  slot.key_size = static_cast<uint16_t>(key.size());
  slot.value_size = static_cast<uint16_t>(value_size);
  slot.state = found ? kFound : kMiss;
  slot.type = static_cast<uint8_t>(type);
  std::memcpy(slot.bytes, key.data(), key.size());
  if (value_size > 0) std::memcpy(slot.bytes + key.size(), value.data, value_size);
}

}  // namespace planb
