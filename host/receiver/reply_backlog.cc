#include "host/receiver/reply_backlog.h"

#include <algorithm>
#include <utility>

namespace planb {

namespace {

// One lock for every ledger. ZeroMQ hands a message to its I/O thread through lock-free queues that race
// detectors cannot see, so the freeing thread takes this lock before it touches anything of the message: the
// thread that made the message released it after filling the message in.
std::mutex& LedgerMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

// One message's bytes and what to give back when ZeroMQ frees it.
struct ReplyBacklog::Held {
  std::shared_ptr<State> state;
  std::string client;
  std::string payload;
};

ReplyBacklog::ReplyBacklog(uint64_t max_per_client)
    : max_per_client_(max_per_client), state_(std::make_shared<State>()) {}

uint64_t ReplyBacklog::Unread(const std::string& client) const {
  std::lock_guard<std::mutex> lock(LedgerMutex());
  const auto it = state_->unread.find(client);
  return it == state_->unread.end() ? 0 : it->second;
}

bool ReplyBacklog::Admits(const std::string& client, uint64_t bytes, uint64_t* unread) const {
  *unread = Unread(client);
  return *unread == 0 || *unread + bytes <= max_per_client_;
}

zmq::message_t ReplyBacklog::Message(const std::string& client, std::string payload) {
  auto held = std::make_unique<Held>(Held{state_, client, std::move(payload)});
  {
    std::lock_guard<std::mutex> lock(LedgerMutex());
    state_->unread[client] += held->payload.size();
  }
  // ZeroMQ calls Free exactly once, from whichever thread drops its last reference (an I/O thread once the bytes
  // are written, or this one on a failed send).
  Held* raw = held.release();
  return zmq::message_t(raw->payload.data(), raw->payload.size(), &ReplyBacklog::Free, raw);
}

void ReplyBacklog::Free(void* /*data*/, void* hint) {
  std::lock_guard<std::mutex> lock(LedgerMutex());  // first: see LedgerMutex
  std::unique_ptr<Held> held(static_cast<Held*>(hint));
  std::map<std::string, uint64_t>& unread = held->state->unread;
  const auto it = unread.find(held->client);
  if (it != unread.end()) {
    it->second -= std::min<uint64_t>(it->second, held->payload.size());
    if (it->second == 0) unread.erase(it);
  }
  held.reset();  // under the lock too
}

}  // namespace planb
