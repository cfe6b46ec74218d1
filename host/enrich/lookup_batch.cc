#include "host/enrich/lookup_batch.h"

#include <charconv>

namespace planb {

LookupBatch::LookupBatch(Reader* reader, const std::vector<EnrichLookup>& lookups, std::vector<MapInfo> infos)
    : reader_(reader), lookups_(lookups), infos_(std::move(infos)) {
  for (size_t j = 0; j < lookups_.size(); ++j) {
    Group* group = nullptr;
    for (Group& g : groups_) {
      if (g.map == lookups_[j].map) group = &g;
    }
    if (group == nullptr) {
      groups_.emplace_back();
      group = &groups_.back();
      group->map = lookups_[j].map;
    }
    group->lookups.push_back(j);
  }
}

void LookupBatch::Start(size_t events) {
  events_ = events;
  asked_.assign(events * lookups_.size(), Asked());
  answers_.assign(events * lookups_.size(), nullptr);
}

void LookupBatch::Ask(size_t e, size_t j, std::string_view key, LookupTime time) {
  Asked& asked = asked_[e * lookups_.size() + j];
  asked.key = ReaderKey();
  asked.key.time = time;
  if (infos_[j].number_keys) {
    const char* end = key.data() + key.size();
    const auto [ptr, ec] = std::from_chars(key.data(), end, asked.key.number);
    if (ec != std::errc() || ptr != end || key.empty()) return;  // not a whole number: a miss
  } else {
    asked.key.key = key;
  }
  asked.asked = true;
}

Status LookupBatch::Run() {
  const size_t per_event = lookups_.size();
  for (Group& group : groups_) {
    group.keys.clear();
    group.slots.clear();
    for (size_t e = 0; e < events_; ++e) {
      for (size_t j : group.lookups) {
        const Asked& asked = asked_[e * per_event + j];
        if (!asked.asked) continue;
        group.keys.push_back(asked.key);
        group.slots.push_back(e * per_event + j);
      }
    }
    if (group.keys.empty()) continue;
    group.results.resize(group.keys.size());
    // Each result says what became of its key; the call's own code adds nothing.
    (void)reader_->LookupMany(group.map, group.keys.data(), group.keys.size(), group.results.data());
    for (size_t i = 0; i < group.keys.size(); ++i) {
      const LookupResult& r = group.results[i];
      if (r.code == Code::kOk) {
        answers_[group.slots[i]] = &r;
      } else if (r.code != Code::kNotFound && r.code != Code::kInvalidArgument) {
        return Status(r.code, "map " + group.map + ": " + r.error);
      }
    }
  }
  return Status::Ok();
}

}  // namespace planb
