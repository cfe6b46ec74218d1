// Which staged batches may merge now when several merge at once (merge_threads, docs/storage-nodes.md).
// The rules keep what a single merger guaranteed:
// - one writer per shard: a map's batches merge one at a time;
// - per-map order: a batch never starts before an earlier staged batch that touches one of its maps has finished
//   (and so, transitively, before any batch that one waits for);
// - a batch whose maps are unknown (an unreadable zip) touches every map;
// - a batch marked `alone` (merge_attempts.h: it was in flight when the merger died beside others) runs with no
//   other batch in flight, and no later batch starts while it waits for the running ones to finish.
// Batches of different maps merge side by side. Pure bookkeeping: no files, no threads; not thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace planb {

class MergeSchedule {
 public:
  struct Batch {
    std::vector<std::string> maps;
    bool maps_known = true;
    bool alone = false;
  };

  // Appends the next batch in staging order; returns its index.
  size_t Add(Batch batch);
  // The first batch, in staging order, neither started nor finished that the rules above let start now; none when
  // every remaining batch must wait.
  std::optional<size_t> NextReady() const;
  // `index` (as NextReady returned it) is merging now.
  void Start(size_t index);
  // `index` needs no more turns: merged, failed, held back or quarantined. It no longer holds its maps.
  void Finish(size_t index);
  size_t running() const { return running_; }
  bool finished(size_t index) const { return batches_[index].state == State::kFinished; }

 private:
  enum class State { kWaiting, kRunning, kFinished };
  struct Entry {
    Batch batch;
    State state = State::kWaiting;
  };
  std::vector<Entry> batches_;
  size_t first_unfinished_ = 0;  // every batch before it is finished
  size_t running_ = 0;
};

}  // namespace planb
