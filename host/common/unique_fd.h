// A file descriptor closed when it goes out of scope, for code that opens files with open(2) and returns early on
// errors. Release() hands it over (to close it and check close's error, say).
#pragma once

#include <unistd.h>

#include <utility>

namespace planb {

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace planb
