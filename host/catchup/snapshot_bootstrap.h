// Catch-up's fallback (docs/storage-nodes.md): a storage node that has nothing merged into a map, while a peer has
// batches of it that it no longer retains, starts from the peer's snapshot: a consistent copy of the peer's
// shard, fetched as readers fetch one (SNAPSHOT + FETCH), verified in a child process as readers verify theirs,
// and installed as this node's shard. The copy carries the peer's record of merged batches and content version,
// so catch-up then fetches only the batches merged after it.
#pragma once

#include <atomic>

#include <string>
#include <zmq.hpp>

#include "host/runtime.h"
#include "host/storage/content_version.h"
#include "planb/status.h"

namespace planb {

// Fetches `peer`'s snapshot of `map` and installs it as this node's shard, holding the merge lock (merging/.lock)
// for the install so that no merge makes the shard meanwhile. `*installed` false (and OK) when a shard of `map`
// appeared here before the install: what it holds is merged, not replaced. `version` gets the installed copy's.
// On error nothing is installed and nothing is left in receive/. Once `stop` is true it stops waiting for the
// merge lock (another process may hold it for long) and installs nothing (OK, `installed` false).
Status BootstrapFromPeer(Runtime& runtime, zmq::context_t& context, const std::string& peer, const std::string& map,
                         const std::atomic<bool>& stop, bool* installed, ContentVersion* version);

}  // namespace planb
