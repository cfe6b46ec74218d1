#include "host/enrich/enrich_counts.h"

namespace planb {

namespace {
std::string Count(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
}  // namespace

std::string SummaryText(const EnrichSpec& spec, const EnrichCounts& counts) {
  std::string text = "planb enrich: " + Count(counts.events, "event", "events") + ", " +
                     std::to_string(counts.malformed) + " malformed (passed through unchanged)";
  if (spec.on_miss == OnMiss::kDrop) text += ", " + std::to_string(counts.dropped) + " dropped on a miss";
  text += "\n";
  for (size_t j = 0; j < spec.lookups.size() && j < counts.lookups.size(); ++j) {
    const EnrichLookup& l = spec.lookups[j];
    const LookupCounts& c = counts.lookups[j];
    text += "  " + l.target.text + "=" + l.map + ":" + l.field.text + (l.member ? "#" + l.member->text : "") +
            (l.time_field ? "@" + l.time_field->text : "") + ": " + Count(c.hits, "hit", "hits") + ", " +
            Count(c.misses, "miss", "misses");
    if (l.member) text += " (" + std::to_string(c.no_member) + " found without #" + l.member->text + ")";
    if (l.fallback) text += " (" + std::to_string(c.fallbacks) + " answered by the fallback)";
    if (l.time_field) text += ", " + std::to_string(c.skipped) + " skipped (no time)";
    if (c.blocked > 0) text += ", " + std::to_string(c.blocked) + " not written (a parent of the target is not an object)";
    text += "\n";
  }
  return text;
}

}  // namespace planb
