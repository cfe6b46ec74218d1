#include "support/redis_peer.h"

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace planb::bench {
namespace {

// A port the kernel says is free now (bound to port 0, then released). Another process may take it before
// redis-server binds it; Start then tries another.
int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

bool IsString(const redisReply* reply) { return reply != nullptr && reply->type == REDIS_REPLY_STRING; }

}  // namespace

RedisPeer::~RedisPeer() { Stop(); }

void RedisPeer::Stop() {
  if (context_ != nullptr) {
    redisFree(context_);
    context_ = nullptr;
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
}

bool RedisPeer::Start(const std::string& dir, std::string* why) {
  // redis-server tells when it listens the way it tells systemd: "READY=1" on the datagram socket NOTIFY_SOCKET
  // names (--supervised systemd), instead of retrying a connect after sleeps.
  const std::string notify_path = dir + "/notify.sock";
  const int notify = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un notify_address{};
  notify_address.sun_family = AF_UNIX;
  if (notify < 0 || notify_path.size() >= sizeof(notify_address.sun_path)) {
    *why = "cannot make a notify socket at " + notify_path;
    if (notify >= 0) ::close(notify);
    return false;
  }
  std::memcpy(notify_address.sun_path, notify_path.c_str(), notify_path.size() + 1);
  ::unlink(notify_path.c_str());
  if (::bind(notify, reinterpret_cast<sockaddr*>(&notify_address), sizeof(notify_address)) != 0) {
    *why = "cannot bind " + notify_path + ": " + std::strerror(errno);
    ::close(notify);
    return false;
  }
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "NOTIFY_SOCKET=", 14) != 0) environment.emplace_back(*e);
  }
  environment.push_back("NOTIFY_SOCKET=" + notify_path);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  *why = "redis-server did not come up on a loopback port in 5 tries (see " + dir + "/redis.log)";
  for (int attempt = 0; attempt < 5; ++attempt) {
    Stop();
    port_ = FreeLoopbackPort();
    if (port_ == 0) {
      *why = "no free loopback port";
      break;
    }
    const std::string port = std::to_string(port_);
    // No persistence, no background saves: a cache of the same pairs the Plan B map holds.
    std::vector<std::string> args = {"redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "",
                                     "--appendonly", "no", "--dir", dir, "--logfile", dir + "/redis.log",
                                     "--protected-mode", "yes", "--supervised", "systemd"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (::posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), envp.data()) != 0) {
      pid_ = -1;
      *why = "redis-server is not installed (scripts/install-deps.sh installs it)";
      break;
    }
    // Until READY=1, or it exits (the port was taken meanwhile: try another), or 10 s pass.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool ready = false;
    while (!ready && pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      pollfd wait{notify, POLLIN, 0};
      if (::poll(&wait, 1, 100) == 1) {
        char message[512];
        const ssize_t n = ::recv(notify, message, sizeof(message) - 1, 0);
        if (n > 0) {
          message[n] = '\0';
          ready = std::strstr(message, "READY=1") != nullptr;
        }
      }
      int status = 0;
      if (!ready && ::waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
    }
    if (!ready) continue;
    timeval timeout{5, 0};
    context_ = redisConnectWithTimeout("127.0.0.1", port_, timeout);
    if (context_ != nullptr && context_->err == 0) break;
    *why = std::string("cannot connect to redis-server: ") + (context_ != nullptr ? context_->errstr : "no memory");
  }
  ::close(notify);
  ::unlink(notify_path.c_str());
  if (context_ != nullptr && context_->err == 0) return true;
  Stop();
  return false;
}

bool RedisPeer::Load(const std::vector<std::pair<std::string, std::string>>& pairs, std::string* why) {
  constexpr size_t kPipeline = 1000;
  for (size_t first = 0; first < pairs.size(); first += kPipeline) {
    const size_t end = std::min(pairs.size(), first + kPipeline);
    for (size_t i = first; i < end; ++i) {
      const char* argv[3] = {"SET", pairs[i].first.data(), pairs[i].second.data()};
      const size_t sizes[3] = {3, pairs[i].first.size(), pairs[i].second.size()};
      redisAppendCommandArgv(context_, 3, argv, sizes);
    }
    for (size_t i = first; i < end; ++i) {
      void* reply = nullptr;
      if (redisGetReply(context_, &reply) != REDIS_OK || reply == nullptr ||
          static_cast<redisReply*>(reply)->type == REDIS_REPLY_ERROR) {
        *why = std::string("SET failed: ") + (context_->err != 0 ? context_->errstr : "an error reply");
        if (reply != nullptr) freeReplyObject(reply);
        return false;
      }
      freeReplyObject(reply);
    }
  }
  return true;
}

bool RedisPeer::Get(const std::string& key) {
  const char* argv[2] = {"GET", key.data()};
  const size_t sizes[2] = {3, key.size()};
  redisReply* reply = static_cast<redisReply*>(redisCommandArgv(context_, 2, argv, sizes));
  const bool ok = IsString(reply);
  if (reply != nullptr) freeReplyObject(reply);
  return ok;
}

bool RedisPeer::MGet(const std::vector<std::string>& keys, size_t first, size_t count) {
  argv_.assign(1, "MGET");
  argv_sizes_.assign(1, 4);
  for (size_t i = 0; i < count; ++i) {
    const std::string& key = keys[(first + i) % keys.size()];
    argv_.push_back(key.data());
    argv_sizes_.push_back(key.size());
  }
  redisReply* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv_.size()), argv_.data(), argv_sizes_.data()));
  bool ok = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == count;
  for (size_t i = 0; ok && i < count; ++i) ok = IsString(reply->element[i]);
  if (reply != nullptr) freeReplyObject(reply);
  return ok;
}

}  // namespace planb::bench
