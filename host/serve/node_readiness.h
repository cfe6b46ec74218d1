// What /readyz checks (docs/operations.md, "Health"): a node is ready to take uploads and reads when its home is
// writable, its merge thread runs, its home's filesystem has more than ready_min_free_disk free and it is not
// catching up on any map (then it refuses that map's reads and snapshots). /healthz only says the process answers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace planb {

struct ReadinessInputs {
  std::string home;
  uint64_t min_free_bytes = 0;
  bool merge_thread_running = false;
  std::vector<std::string> catching_up;  // maps the node is behind a peer on
};

// One line per reason the node is not ready ("home /x is not writable: ..."); empty when it is ready. Writes and
// removes a probe file (.ready-probe, never through a symlink) in the home.
std::vector<std::string> ReadinessProblems(const ReadinessInputs& inputs);

}  // namespace planb
