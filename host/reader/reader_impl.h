// planb::Reader's implementation (include/planb/reader.h has the contract). Tests reach it through Impl::Of for
// the TEST_ hooks; nothing else outside host/reader/ should.
//
// Layout: one MapSlot per configured map (built at Open, never added to or removed, so finding one needs no
// lock); per thread and map a MapContext (thread_contexts.h); a background thread for Maintain.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/reader/map_slot.h"
#include "host/reader/remote_pool.h"
#include "host/reader/thread_contexts.h"
#include "host/runtime.h"
#include "host/transfer/protocol.h"
#include "planb/reader.h"

namespace planb {

// Hidden: libplanb_reader.so exports the public Reader only (the tests link the host statically).
class __attribute__((visibility("hidden"))) Reader::Impl {
 public:
  static Status Open(const ReaderOptions& options, std::unique_ptr<Reader>* out);
  ~Impl();

  // One key: `lookup` holds the text key or the number (`number_key`); `time` the instant asked about.
  LookupResult LookupOne(std::string_view map, LookupKey lookup, bool number_key, LookupTime time);
  Code LookupMany(std::string_view map, const ReaderKey* keys, size_t count, LookupResult* results);
  Status Prepare(std::string_view map);
  Status Refresh(std::string_view map);
  Status Describe(std::string_view map, MapInfo* out) const;
  Status Maintain();
  ReaderStats Stats() const;

  // Tests.
  static Impl* Of(Reader& reader) { return reader.impl_.get(); }
  Runtime& runtime() { return *runtime_; }
  // Makes `env` the environment lookups of `map` use from their next lookup on (as maintenance does when a new
  // snapshot arrives).
  Status TEST_Publish(std::string_view map, std::shared_ptr<MapEnv> env);
  // How many thread contexts this Reader owns.
  size_t TEST_ContextCount() const { return contexts_->size(); }
  bool maintenance_thread_running() const { return thread_.joinable(); }

 private:
  Impl() = default;

  MapSlot* FindSlot(std::string_view map) const;
  // An error result for a map name not in the config (message in the thread's buffer).
  LookupResult UnknownMap(std::string_view map) const;
  // Readies the calling thread's transaction on `slot` for a lookup: renews it, or moves it to the slot's
  // current environment when the generation changed. kOk; kNotFound when the map has no data (every key misses);
  // else an error described in (*context)->error.
  // `renew` false leaves the transaction as it was unless the environment changed (a lookup the read index
  // answers needs none): Renew then readies it for the store type.
  Code Begin(MapSlot& slot, MapContext** context, bool renew);
  Code Renew(MapContext* context);
  Code Switch(MapSlot& slot, MapContext* context);
  HotKeyCache* CacheOf(const MapSlot& slot, MapContext* context);
  void MaintenanceLoop(int64_t interval_ms);
  // Storage nodes: moves `slot` to its shard's new environment when a compaction replaced the files it holds.
  Status ReopenIfReplaced(MapSlot& slot);

  // Remote mode (reader_remote.cc). Keys of the wrong kind are refused as in process, before any READ.
  LookupResult LookupOneRemote(MapSlot& slot, const LookupKey& lookup, bool number_key, LookupTime time);
  Code LookupManyRemote(MapSlot& slot, const ReaderKey* keys, size_t count, LookupResult* results);
  Status PrepareRemote(const MapSlot& slot);
  // The calling thread's remote scratch for `slot`, with the views of its last call ended.
  RemoteScratch& RemoteScratchOf(const MapSlot& slot, MapContext** context);
  // One READ of `request`'s keys; result k goes to results[positions[k]]. An error of the whole READ (no node
  // answered, the node's own error, no data, an answer that does not decode) is set in each of its results and
  // returned; a refused key fails its own result. Counts in `tally`; the first failure's code in `first_error`.
  Status AskRemote(const MapSlot& slot, RemoteScratch& scratch, const protocol::ReadRequest& request,
                   const size_t* positions, LookupResult* results, LookupTotals* tally, Code* first_error);

  // What a remote map's last answer said, for Stats.
  struct RemoteFacts {
    std::atomic<bool> answered{false};
    std::atomic<uint64_t> batches{0};
    void Note(uint64_t version) {
      batches.store(version, std::memory_order_relaxed);
      if (!answered.load(std::memory_order_relaxed)) answered.store(true, std::memory_order_relaxed);
    }
  };

  std::unique_ptr<Runtime> runtime_;
  std::vector<std::unique_ptr<MapSlot>> slots_;
  std::string known_maps_;  // "a, b, c" for unknown-map messages
  mutable std::atomic<uint64_t> unknown_map_lookups_{0};
  uint64_t serial_ = 0;
  std::shared_ptr<ContextRegistry> contexts_ = std::make_shared<ContextRegistry>();
  std::unique_ptr<RemotePool> remote_;              // remote mode only
  std::unique_ptr<RemoteFacts[]> remote_facts_;     // remote mode: by slot index

  std::mutex maintain_mutex_;  // one Maintain at a time (the thread's and the caller's)
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<bool> closing_{false};  // set first by ~Impl: a read index build in progress stops early
  std::thread thread_;
};

}  // namespace planb
