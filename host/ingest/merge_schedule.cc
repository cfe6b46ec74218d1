#include "host/ingest/merge_schedule.h"

#include <utility>

namespace planb {

namespace {

// The maps held by earlier unfinished batches while NextReady walks the staging order.
class Claims {
 public:
  bool Touches(const MergeSchedule::Batch& batch) const {
    if (all_) return true;
    if (!batch.maps_known) return !maps_.empty();
    for (const std::string& map : batch.maps) {
      if (maps_.count(map) > 0) return true;
    }
    return false;
  }
  void Claim(const MergeSchedule::Batch& batch) {
    if (!batch.maps_known || batch.alone) {
      all_ = true;
      return;
    }
    maps_.insert(batch.maps.begin(), batch.maps.end());
  }
  bool all() const { return all_; }

 private:
  std::set<std::string> maps_;
  bool all_ = false;
};

}  // namespace

size_t MergeSchedule::Add(Batch batch) {
  batches_.push_back(Entry{std::move(batch), State::kWaiting});
  return batches_.size() - 1;
}

std::optional<size_t> MergeSchedule::NextReady() const {
  Claims claims;
  for (size_t i = first_unfinished_; i < batches_.size(); ++i) {
    const Entry& entry = batches_[i];
    if (entry.state == State::kFinished) continue;
    if (entry.state == State::kRunning) {
      claims.Claim(entry.batch);
      continue;
    }
    if (claims.all()) return std::nullopt;  // nothing later may start
    if (claims.Touches(entry.batch)) {
      claims.Claim(entry.batch);
      continue;
    }
    // Alone: only once nothing runs, and nothing behind it starts meanwhile (it would never find a quiet moment).
    if (entry.batch.alone && running_ > 0) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

void MergeSchedule::Start(size_t index) {
  batches_[index].state = State::kRunning;
  ++running_;
}

void MergeSchedule::Finish(size_t index) {
  if (batches_[index].state == State::kRunning) --running_;
  batches_[index].state = State::kFinished;
  while (first_unfinished_ < batches_.size() && batches_[first_unfinished_].state == State::kFinished) {
    ++first_unfinished_;
  }
}

}  // namespace planb
