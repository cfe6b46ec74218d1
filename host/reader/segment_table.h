// A number line cut into segments, each with an answer (or none), searched without LMDB: the arrays of the
// Reader's read index (range_answer_index.h). Segment i runs from starts[i] up to starts[i + 1] - 1 (the last one
// to the end of K); a number below the first start is in none.
//
// Layout, for lookups that miss every cache: the entries (start + answer, so the answer comes in the cache line
// that the search ends on) in one sorted array, and a bucket table over the span of the starts, 2^bits buckets
// for about four entries each, giving each bucket's first entry. A search reads one bucket pair, then
// binary-searches the few entries of its bucket: two or three cache lines in all, against a B+tree walk of four
// or more pages. Skewed starts only make some buckets longer (the search inside stays logarithmic).
// Immutable once Finish()ed; any number of threads may search it. Header-only: K is uint32_t (IPv4) or
// unsigned __int128 (IPv6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace planb {

template <typename K>
class SegmentTable {
 public:
  static constexpr uint32_t kNoAnswer = UINT32_MAX;

  // REQUIRES: before Finish(); `start` above every start added before.
  void Add(K start, uint32_t answer) { entries_.push_back(Entry{start, answer}); }

  void Finish() {
    entries_.shrink_to_fit();
    if (entries_.empty()) return;
    min_ = entries_.front().start;
    const K span = entries_.back().start - min_;
    unsigned bits = 1;
    while (bits < 20 && (size_t{1} << (bits + 2)) < entries_.size()) ++bits;
    const unsigned span_bits = BitWidth(span);
    shift_ = span_bits > bits ? span_bits - bits : 0;
    const size_t buckets = static_cast<size_t>(span >> shift_) + 1;
    first_.assign(buckets + 1, 0);
    size_t e = 0;
    for (size_t b = 0; b < buckets; ++b) {
      first_[b] = static_cast<uint32_t>(e);
      while (e < entries_.size() && static_cast<size_t>((entries_[e].start - min_) >> shift_) == b) ++e;
    }
    first_[buckets] = static_cast<uint32_t>(entries_.size());
  }

  // The answer of the segment holding x; kNoAnswer when x is in none or in one without an answer.
  uint32_t Find(K x) const {
    if (entries_.empty() || x < min_) return kNoAnswer;
    const size_t last_bucket = first_.size() - 2;
    const K relative = (x - min_) >> shift_;  // compared before narrowing: a K may be wider than size_t
    const size_t b = relative >= static_cast<K>(last_bucket) ? last_bucket : static_cast<size_t>(relative);
    // The last entry at or before x is in bucket b, or is the one before it (every entry before b starts at or
    // below b's lower bound, which is at or below x).
    size_t low = first_[b];
    size_t count = first_[b + 1] - low;
    while (count > 0) {  // the first entry of the bucket above x
      const size_t half = count / 2;
      if (entries_[low + half].start <= x) {
        low += half + 1;
        count -= half + 1;
      } else {
        count = half;
      }
    }
    return low == 0 ? kNoAnswer : entries_[low - 1].answer;
  }

  size_t size() const { return entries_.size(); }
  size_t bytes() const { return entries_.capacity() * sizeof(Entry) + first_.capacity() * sizeof(uint32_t); }

 private:
  // Packed: a 16-byte start beside its 4-byte answer would otherwise be padded to 32 bytes, so IPv6 entries take
  // 20 (five in 100 bytes instead of three in 96) and the bucket's search reads fewer cache lines. IPv4 entries
  // are 8 bytes either way. x86-64 loads the unaligned 16-byte start as two 8-byte words.
  struct __attribute__((packed)) Entry {
    K start;
    uint32_t answer;
  };

  static unsigned BitWidth(K v) {
    unsigned width = 0;
    while (v != 0) {
      v >>= 1;
      ++width;
    }
    return width;
  }

  std::vector<Entry> entries_;
  std::vector<uint32_t> first_;  // per bucket, its first entry; one more at the end (entries_.size())
  K min_ = 0;
  unsigned shift_ = 0;
};

}  // namespace planb
