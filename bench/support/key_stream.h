// The keys a lookup benchmark asks for, laid end to end in one buffer in the order they are asked, as events
// streaming past present them: reading the next key is a sequential read the hardware prefetches, as in an
// enrichment pipeline where the key was just parsed. Keys kept as separate strings would each be a cache miss at
// a random heap address before the lookup starts; that miss belongs to the benchmark, not to the store, and it
// overlaps less with a longer lookup path, which would bias every ratio against the longer path.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace planb::bench {

class KeyStream {
 public:
  KeyStream() = default;
  explicit KeyStream(const std::vector<std::string>& keys) {
    for (const std::string& key : keys) Add(key);
  }

  void Add(std::string_view key) {
    bytes_.append(key);
    ends_.push_back(bytes_.size());
  }
  size_t size() const { return ends_.size(); }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_.data() + begin, ends_[i] - begin);
  }

 private:
  std::string bytes_;
  std::vector<size_t> ends_;  // where each key ends in bytes_
};

}  // namespace planb::bench
