// The hash of a text key that the Reader's point read index files it under (point_answer_index.h): XXH3-64,
// compiled inline into the lookup path (a call into libxxhash costs more than hashing a short key).
#pragma once

#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace planb {

inline uint64_t HashLookupKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

}  // namespace planb
