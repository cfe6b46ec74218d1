// Redis as the remote-lookup peer (bench/remote_bench.cc): a redis-server child on a free loopback port, started
// and stopped by the bench, nothing saved to disk, and a hiredis connection to it that lives across calls (as a
// Redis user's client does). Keys and values are loaded with pipelined SETs before timing.
#pragma once

#include <hiredis/hiredis.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace planb::bench {

class RedisPeer {
 public:
  RedisPeer() = default;
  ~RedisPeer();
  RedisPeer(const RedisPeer&) = delete;
  RedisPeer& operator=(const RedisPeer&) = delete;

  // Starts redis-server (from PATH) on 127.0.0.1 and a free port, in `dir` (its working directory), and connects.
  // False with `*why` when redis-server is not installed or does not come up within 10 s.
  bool Start(const std::string& dir, std::string* why);
  // SETs every pair, 1,000 to a pipeline. False with `*why` on any error reply.
  bool Load(const std::vector<std::pair<std::string, std::string>>& pairs, std::string* why);

  // GET `key`: true when it answered a string (the value is left in the reply, not copied).
  bool Get(const std::string& key);
  // MGET of `count` keys from `keys` starting at `first` (wrapping): true when every key answered a string.
  bool MGet(const std::vector<std::string>& keys, size_t first, size_t count);

  int port() const { return port_; }

 private:
  void Stop();

  pid_t pid_ = -1;
  int port_ = 0;
  redisContext* context_ = nullptr;
  std::vector<const char*> argv_;  // MGET's arguments, reused across calls
  std::vector<size_t> argv_sizes_;
};

}  // namespace planb::bench
