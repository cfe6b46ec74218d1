// A bench's size from the environment (PLANB_BENCH_ROWS=...): a positive decimal count, or the fallback when the
// variable is unset or empty. Anything else ends the bench with a message naming the variable: a typo must not
// run a bench of another size than asked for.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace planb::bench {

inline size_t EnvCount(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value == 0) {
    std::fprintf(stderr, "%s=%s: expected a positive count\n", name, text);
    std::exit(2);
  }
  return static_cast<size_t>(value);
}

}  // namespace planb::bench
