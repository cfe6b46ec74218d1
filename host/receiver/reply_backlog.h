// The bytes of replies a storage node has handed to ZeroMQ for each client that ZeroMQ has not yet written to the
// client's connection (or dropped with it). A client that asks and does not read makes ZeroMQ queue every reply
// in the node's memory, since a ROUTER socket's high-water mark counts messages, not bytes: forty unread 10 MB
// query results held 420 MiB. Replies made through Message() count until ZeroMQ frees them (it frees a message
// once its last byte is in the kernel, or when the connection goes), so the receiver can refuse a client's next
// big reply while its backlog is over the bound.
// Thread-safety: Admits, Unread and Message on the receiver's Run thread; ZeroMQ's I/O threads free messages
// concurrently, under one process-wide mutex. The state outlives the ledger while ZeroMQ holds messages.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <zmq.hpp>

namespace planb {

class ReplyBacklog {
 public:
  explicit ReplyBacklog(uint64_t max_per_client);

  // Whether a reply of `bytes` may go to `client` now: its unread bytes and these stay within the bound, or it has
  // none unread (so that one reply larger than the bound still goes to a client that reads). `*unread` gets the
  // client's unread bytes.
  bool Admits(const std::string& client, uint64_t bytes, uint64_t* unread) const;
  uint64_t Unread(const std::string& client) const;
  uint64_t max_per_client() const { return max_per_client_; }

  // A ZeroMQ message holding `payload` whose bytes count as `client`'s until ZeroMQ frees it.
  zmq::message_t Message(const std::string& client, std::string payload);

 private:
  struct State {
    std::map<std::string, uint64_t> unread;  // clients with bytes unread only; guarded by the ledgers' mutex
  };
  struct Held;
  static void Free(void* data, void* hint);

  uint64_t max_per_client_;
  std::shared_ptr<State> state_;
};

}  // namespace planb
