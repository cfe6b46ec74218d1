// The lookups of one batch of events, answered map by map: every key a batch asks of a map goes to the Reader in
// one LookupMany (one read transaction), so a batch of 256 events with two lookups of one map costs one renew,
// not 512. Nothing is allocated once the buffers have grown to the largest batch.
// View lifetime: answers point into the maps until the next Run (each map is asked once per Run, so no answer
// of a Run is overwritten by a later lookup of the same Run).
// Thread-safety: one per thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "host/enrich/enrich_spec.h"
#include "planb/reader.h"

namespace planb {

class LookupBatch {
 public:
  // `infos[j]` describes `lookups[j].map`. REQUIRES: `reader` and `lookups` outlive this.
  LookupBatch(Reader* reader, const std::vector<EnrichLookup>& lookups, std::vector<MapInfo> infos);

  // Starts a batch of `events` events: no lookup asked yet.
  void Start(size_t events);
  // Event `e` asks lookup `j` for `key` (a view valid until Run returns) at `time`. A key that a number-keyed map
  // cannot take (not a whole number) is answered as a miss.
  void Ask(size_t e, size_t j, std::string_view key, LookupTime time);
  // Looks every asked key up. Fails, naming the map, when a map cannot answer (its environment, its snapshot, its
  // store type failing); a key the map refuses on its own (a malformed address) is a miss.
  Status Run();
  // Event e's lookup j: its result when found, else null (a miss, or not asked).
  const LookupResult* Answer(size_t e, size_t j) const { return answers_[e * lookups_.size() + j]; }
  const MapInfo& info(size_t j) const { return infos_[j]; }

 private:
  struct Asked {
    bool asked = false;
    ReaderKey key;
  };
  struct Group {  // the lookups of one map
    std::string map;
    std::vector<size_t> lookups;
    std::vector<ReaderKey> keys;
    std::vector<size_t> slots;  // keys[i] answers slot slots[i]
    std::vector<LookupResult> results;
  };

  Reader* reader_;
  const std::vector<EnrichLookup>& lookups_;
  std::vector<MapInfo> infos_;
  std::vector<Group> groups_;
  size_t events_ = 0;
  std::vector<Asked> asked_;                 // events x lookups
  std::vector<const LookupResult*> answers_;  // events x lookups
};

}  // namespace planb
