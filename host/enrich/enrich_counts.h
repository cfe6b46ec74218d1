// What `planb enrich` did, for its summary on stderr: per lookup and in total.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/enrich/enrich_spec.h"

namespace planb {

struct LookupCounts {
  uint64_t hits = 0;
  uint64_t misses = 0;     // not found, FIELD absent or not a key (an object, true...): counted whatever the fallback
  uint64_t fallbacks = 0;  // misses answered by --fallback
  uint64_t skipped = 0;    // TIMEFIELD absent or not a time: the lookup was not made
  uint64_t blocked = 0;    // TARGET could not be written (a member on its path is not an object)
  uint64_t no_member = 0;  // #MEMBER: found, but the answer has no such member (or is not JSON): counted as misses
};

struct EnrichCounts {
  uint64_t events = 0;     // lines or rows read
  uint64_t malformed = 0;  // passed through unchanged
  uint64_t dropped = 0;    // --on-miss drop
  std::vector<LookupCounts> lookups;  // as EnrichSpec::lookups
};

// "planb enrich: 10000 events, 12 malformed (passed through), 40 dropped" and one line per lookup:
// "  geo.country=ip_to_country:client.ip  9500 hits, 500 misses (200 by fallback), 12 skipped (no time)".
std::string SummaryText(const EnrichSpec& spec, const EnrichCounts& counts);

}  // namespace planb
