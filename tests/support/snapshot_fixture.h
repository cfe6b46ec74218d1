// Helpers for the snapshot tests: real shards made by a real merge, snapshot directories installed by hand, batch
// zips of a shard, and a scripted stand-in for a storage node (a real ZeroMQ ROUTER on tcp://127.0.0.1:*, on its
// own thread) that answers SNAPSHOT and FETCH by a script, to send what a real node never would.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "host/runtime.h"
#include "host/storage/content_version.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"
#include "support/endpoints.h"

namespace planb::testing {

// A single-node home at `dir` with map "m" (state, hashed) holding `rows` merged as one batch; `*shard` is the
// shard directory (data.mdb inside), `*version` its content version.
Status MakeShard(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& rows,
                 std::string* shard, ContentVersion* version);
// rows key-<first>..key-<first+count-1> with values that do not compress to nothing.
std::vector<std::pair<std::string, std::string>> NumberedRows(int first, int count);

// Copies `shard`/data.mdb to `home`/snapshots/`map`/`create_time_ms`/data.mdb: a complete snapshot as a fetch
// would leave it. Returns the snapshot directory.
std::string InstallSnapshot(const std::string& home, const std::string& map, int64_t create_time_ms,
                            const std::string& shard);
// The names in `home`/snapshots/`map` (sorted; dot-files included).
std::vector<std::string> SnapshotEntries(const std::string& home, const std::string& map);
// The names in `home`/snapshots/`map` that are complete snapshots (all digits), sorted.
std::vector<std::string> CompleteSnapshots(const std::string& home, const std::string& map);

// A batch zip holding `map`/data.mdb = `data_mdb`'s bytes (a file copied in), as a node's SNAPSHOT zip would.
std::string MakeSnapshotZip(const std::string& dir, const std::string& map, const std::string& data_mdb);

// The config text of a reading node "reader": node_list over `endpoints` (node1, node2, ...), request_timeout 300ms
// unless `extra` (top-level lines: the snapshot durations) sets it, and the `maps` sections (default: map "m",
// state, hashed).
std::string ReaderConfig(const std::vector<std::string>& endpoints, const std::string& extra,
                         const std::string& maps = "");
// The [map.*] sections of examples/planb.ini (what ClusterFixture's nodes are configured with).
std::string ExampleMapSections();

// The scripted node. Answers SNAPSHOT with `offer` (size and checksum of `zip` filled in unless set) or with
// `snapshot_error`; answers each FETCH with `fetch_error` (when set and it returns one), or with the bytes asked
// for, after `tamper` (when set) may change the FetchData, the bytes, or return false to stay silent.
class ScriptedNode {
 public:
  struct Script {
    std::string zip;
    protocol::SnapshotOffer offer;  // token 42, chunk size 1000 by default
    bool fill_offer = true;         // total_size and checksum from `zip`
    std::optional<protocol::ErrorReply> snapshot_error;
    std::function<bool(const protocol::FetchRequest&, protocol::FetchData*, std::string*)> tamper;
    // When it returns an error, the FETCH is answered with ERROR instead.
    std::function<std::optional<protocol::ErrorReply>(const protocol::FetchRequest&)> fetch_error;
    bool reorder = false;  // answers FETCHes in pairs, the later one first
  };

  ScriptedNode(zmq::context_t& context, Script script);
  ~ScriptedNode();
  const std::string& endpoint() const { return endpoint_; }
  int snapshots() const { return snapshots_.load(); }
  // SNAPSHOT_SINCE requests, each answered as a node that predates them answers (ERROR kNotSupported).
  int since_requests() const { return since_requests_.load(); }
  int fetches() const { return fetches_.load(); }

 private:
  void Run();
  void Answer(const std::vector<zmq::message_t>& frames);
  void Send(const std::string& routing_id, protocol::Command command, uint64_t request_id, const std::string& payload,
            const std::string* data);

  Script script_;
  zmq::socket_t socket_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::atomic<int> snapshots_{0};
  std::atomic<int> since_requests_{0};
  std::atomic<int> fetches_{0};
  struct Held {
    std::string routing_id;
    uint64_t request_id;
    std::string payload;
    std::string data;
  };
  std::optional<Held> held_;
  std::thread thread_;
};

}  // namespace planb::testing
