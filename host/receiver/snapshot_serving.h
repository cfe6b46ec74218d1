// The snapshot zips an upload receiver serves to FETCH requests, by token. Each is held open from the offer on, so
// a zip the SnapshotSource unlinks for a newer one stays readable to those still fetching it; it is closed when
// no FETCH touched it for the idle expiry (the requester then gets "unknown token" and asks SNAPSHOT again).
// Thread-safety: none; the receiver's Run thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host/receiver/snapshot_offer.h"
#include "host/common/transfer_pace.h"
#include "host/storage/content_version.h"
#include "host/transfer/token.h"
#include "planb/status.h"

namespace planb {

class ServedSnapshots {
 public:
  using Clock = std::chrono::steady_clock;

  struct Entry {
    int fd = -1;
    std::string map;
    std::string owner;   // the client it was offered to ("" = anyone: plaintext)
    std::string client;  // ClientAccess::Identify of that client, for the per-client bound and the log
    uint64_t served = 0;  // bytes sent in FETCH_DATA so far
    TransferPace pace{Clock::now()};
    std::string zip_path;  // for messages; the file may be gone
    uint64_t size = 0;
    Clock::time_point last_touch;
    bool fetched = false;  // a FETCH_DATA of it has been sent
  };

  ServedSnapshots() = default;
  ~ServedSnapshots() { Clear(); }
  ServedSnapshots(const ServedSnapshots&) = delete;
  ServedSnapshots& operator=(const ServedSnapshots&) = delete;

  // Opens `prepared.zip_path` and serves it as `token` (REQUIRES: not in use) to `owner` (`client` as
  // Identify named it). kIOError naming the zip when it cannot be opened.
  Status Add(Token token, const std::string& map, const std::string& owner, const std::string& client,
             const PreparedSnapshot& prepared, Clock::time_point now);
  // The snapshot served as `token` to `owner`, or null (also when it was offered to another).
  Entry* Find(Token token, const std::string& owner);
  // Reads exactly `length` bytes at `offset` of `entry`'s zip into `out`. kIOError naming the zip when the file
  // cannot be read or ends early.
  static Status ReadAt(const Entry& entry, uint64_t offset, size_t length, char* out);
  struct Closed {
    std::string map, client;
    std::string how;  // "an idle", "a slow"
    std::string why;
  };
  // Closes the snapshots untouched for `expiry`, and those whose fetches fell below `min_rate` bytes/s over a
  // window of `expiry` (TransferPace); says which, for the log.
  std::vector<Closed> ExpireIdle(Clock::time_point now, std::chrono::milliseconds expiry, uint64_t min_rate);
  // How many snapshots are being served to `client`.
  size_t CountFor(const std::string& client) const;
  void Clear();
  size_t size() const { return entries_.size(); }
  bool Contains(Token token) const { return entries_.count(token) != 0; }

 private:
  std::map<Token, Entry> entries_;
};

}  // namespace planb
