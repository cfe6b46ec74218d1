#include "host/reader/thread_contexts.h"

#include <algorithm>

#include "host/reader/remote_scratch.h"

namespace planb {

MapContext::MapContext() = default;
MapContext::~MapContext() = default;

namespace {

std::atomic<uint64_t> next_serial{1};

struct ThreadEntry {
  uint64_t serial;
  uint32_t map;
  MapContext* context;
  std::shared_ptr<ContextRegistry> registry;  // keeps the registry (not the Reader) alive for Release at exit
};

class ThreadContexts {
 public:
  ThreadContexts() = default;
  ThreadContexts(const ThreadContexts&) = delete;
  ThreadContexts& operator=(const ThreadContexts&) = delete;
  ~ThreadContexts() {
    for (ThreadEntry& entry : entries_) entry.registry->Release(entry.context);
  }

  MapContext* Find(uint64_t serial, uint32_t map) const {
    for (const ThreadEntry& entry : entries_) {
      if (entry.serial == serial && entry.map == map) return entry.context;
    }
    return nullptr;
  }

  MapContext* Add(uint64_t serial, uint32_t map, const std::shared_ptr<ContextRegistry>& registry) {
    // The contexts of destroyed Readers are gone already; only their entries remain.
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [](const ThreadEntry& entry) { return entry.registry->closed(); }),
                   entries_.end());
    entries_.reserve(entries_.size() + 1);  // so that push_back cannot throw after the context exists
    MapContext* context = registry->Add(map);
    entries_.push_back(ThreadEntry{serial, map, context, registry});
    return context;
  }

  ErrorBuffer* error() { return &error_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<ThreadEntry> entries_;
  ErrorBuffer error_;
};

thread_local ThreadContexts thread_contexts;

}  // namespace

MapContext* ContextRegistry::Add(uint32_t map) {
  auto context = std::make_unique<MapContext>();
  context->map = map;
  MapContext* raw = context.get();
  std::lock_guard<std::mutex> lock(mutex_);
  contexts_.push_back(std::move(context));
  return raw;
}

void ContextRegistry::Release(MapContext* context) {
  std::unique_ptr<MapContext> doomed;  // destroyed outside the lock: closing an environment may take a while
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_.load(std::memory_order_relaxed)) return;
    auto it = std::find_if(contexts_.begin(), contexts_.end(),
                           [context](const std::unique_ptr<MapContext>& c) { return c.get() == context; });
    if (it == contexts_.end()) return;
    if (retired_.size() <= context->map) retired_.resize(context->map + 1);
    retired_[context->map] += context->counters.Read();  // its thread is exiting: nothing counts any more
    doomed = std::move(*it);
    contexts_.erase(it);
  }
}

void ContextRegistry::CloseAll() {
  std::vector<std::unique_ptr<MapContext>> doomed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_.store(true, std::memory_order_release);
    doomed.swap(contexts_);
  }
}

LookupTotals ContextRegistry::Sum(uint32_t map) const {
  std::lock_guard<std::mutex> lock(mutex_);
  LookupTotals totals = map < retired_.size() ? retired_[map] : LookupTotals();
  for (const std::unique_ptr<MapContext>& context : contexts_) {
    if (context->map == map) totals += context->counters.Read();
  }
  return totals;
}

size_t ContextRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return contexts_.size();
}

uint64_t NextReaderSerial() { return next_serial.fetch_add(1, std::memory_order_relaxed); }

MapContext* FindThreadContext(uint64_t serial, uint32_t map) { return thread_contexts.Find(serial, map); }

MapContext* AddThreadContext(uint64_t serial, uint32_t map, const std::shared_ptr<ContextRegistry>& registry) {
  return thread_contexts.Add(serial, map, registry);
}

ErrorBuffer* ThreadErrorBuffer() { return thread_contexts.error(); }

size_t ThreadContextCount() { return thread_contexts.size(); }

}  // namespace planb
