#include "host/transfer/token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace planb {

Token Token::Random() {
  uint64_t words[2];
  auto* bytes = reinterpret_cast<unsigned char*>(words);
  size_t filled = 0;
  while (filled < sizeof words) {
    const ssize_t n = ::getrandom(bytes + filled, sizeof words - filled, 0);
    if (n > 0) {
      filled += static_cast<size_t>(n);  // a short read (a signal) draws the rest
    } else if (errno != EINTR) {
      // No kernel randomness (getrandom(2) needs Linux 3.17): a guessable token would be worse than stopping.
      std::fprintf(stderr, "planb: getrandom: %s\n", std::strerror(errno));
      std::abort();
    }
  }
  return Token{words[0], words[1]};
}

std::string Token::Shown() const { return Hex().substr(0, 8) + "..."; }

std::string Token::Hex() const {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return text;
}

}  // namespace planb
