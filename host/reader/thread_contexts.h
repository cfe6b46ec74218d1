// Per-thread lookup state of Readers: for each (Reader, map) a thread has looked up, a MapContext with its own read
// transaction and cursor on the environment it uses. Each thread keeps a small table of them keyed by the Reader's
// serial number (never reused, so a destroyed Reader's entries never match again) and the map's index.
//
// Ownership: a Reader's ContextRegistry owns its contexts. The Reader closes all of them when it is destroyed
// (no lookup can be running then); a thread that exits first frees its own. Entries of destroyed Readers are
// dropped by the thread the next time it adds one, and at its exit.
// Thread-safety: a MapContext is used only by its thread (and by ~Reader), but for its counters, which Stats reads
// from any thread (lookup_counters.h); the registry is locked.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "host/reader/hot_key_cache.h"
#include "host/reader/lookup_counters.h"
#include "host/reader/answer_index.h"
#include "host/storage/map_reader.h"
#include "planb/status.h"

namespace planb {

struct RemoteScratch;  // remote_scratch.h

struct MapContext {
  uint32_t map = 0;                 // the map's index in its Reader
  LookupCounters counters;          // this thread's answers for the map
  std::optional<MapReader> reader;  // open on the environment of `generation`
  uint64_t generation = 0;          // the slot's generation `reader` was opened at; 0 = no reader
  std::shared_ptr<const AnswerIndex> index;  // the slot's read index at that generation (null: none)
  std::unique_ptr<HotKeyCache> cache;  // this thread's answers of the environment `reader` is on (made on first use)
  ErrorBuffer error;                // messages of failed lookups, valid until this thread's next lookup of the map
  std::vector<FieldValue> many_fields;  // LookupMany's own field values, one run per result (grows, never shrinks)
  std::deque<std::string> many_errors;  // LookupMany's messages of keys the store refused (a malformed address)
  std::vector<uint8_t> many_answered;   // LookupMany: which keys a point index answered (grows, never shrinks)
  std::unique_ptr<RemoteScratch> remote;  // remote mode: the last call's answers (made on first use)

  MapContext();
  ~MapContext();

  void Close() {
    reader.reset();
    index.reset();
    cache.reset();
    generation = 0;
  }
};

class ContextRegistry {
 public:
  // A new context for the map of index `map`, owned here.
  MapContext* Add(uint32_t map);
  // Frees `context` unless CloseAll already did, keeping its counts in the retired totals of its map.
  void Release(MapContext* context);
  // The counts of map `map`: its live contexts' and those of contexts released before.
  LookupTotals Sum(uint32_t map) const;
  // Frees every context; later Release calls do nothing.
  void CloseAll();
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::atomic<bool> closed_{false};
  std::vector<std::unique_ptr<MapContext>> contexts_;
  std::vector<LookupTotals> retired_;  // by map index
};

// A serial number for a new Reader (1, 2, ...; never reused in a process).
uint64_t NextReaderSerial();

// The calling thread's context for map `map` of the Reader `serial`, null when it has none yet. Hot path: no
// allocation, no lock.
MapContext* FindThreadContext(uint64_t serial, uint32_t map);
// Creates the calling thread's context for (serial, map), registered with `registry` (allocates).
MapContext* AddThreadContext(uint64_t serial, uint32_t map, const std::shared_ptr<ContextRegistry>& registry);
// The calling thread's buffer for errors that concern no map (an unknown map name).
ErrorBuffer* ThreadErrorBuffer();
// How many entries the calling thread's table holds (tests).
size_t ThreadContextCount();

}  // namespace planb
