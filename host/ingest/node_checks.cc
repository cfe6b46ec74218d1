#include "host/ingest/node_checks.h"

namespace planb {

Status JudgeNodeChecks(const std::vector<NodeCheck>& checks, size_t quorum, const std::string& what,
                       std::map<std::string, std::map<std::string, uint64_t>>* versions,
                       std::vector<std::string>* held_back, const std::string& held_back_hint) {
  std::string problems;
  bool any_held_back = false;
  std::string unreachable;
  size_t count = 0;
  size_t unanswered = 0;
  if (versions != nullptr) versions->clear();
  if (held_back != nullptr) held_back->clear();
  for (const NodeCheck& check : checks) {
    const std::string where = check.local ? check.node + " (this node)" : check.node;
    if (!check.status.ok()) {
      unreachable += "\n  " + where + ": " + check.status.message();
      ++unanswered;
      continue;
    }
    for (const protocol::PrepareMapReply& answer : check.reply.maps) {
      if (answer.verdict == protocol::PrepareVerdict::kHeldBack && held_back != nullptr) {
        held_back->push_back(where + ": " + answer.message);
      } else if (answer.verdict != protocol::PrepareVerdict::kOk) {
        problems += "\n  " + where + ": " + answer.message;
        any_held_back = any_held_back || answer.verdict == protocol::PrepareVerdict::kHeldBack;
        ++count;
      }
      if (versions != nullptr) (*versions)[check.node][answer.map] = answer.batches;
    }
  }
  const bool quorum_answered = checks.size() - unanswered >= quorum;
  if (count == 0 && quorum_answered) return Status::Ok();
  if (!quorum_answered) {
    problems += unreachable;
    count += unanswered;
    if (quorum < checks.size()) {
      problems += "\n  (write_quorum is " + std::to_string(quorum) + ": at least that many nodes must answer)";
    }
  }
  if (any_held_back && !held_back_hint.empty()) problems += "\n  (" + held_back_hint + ")";
  return Status::Invalid("the storage nodes cannot take this " + what + ", so nothing was staged on any node (" +
                         std::to_string(count) + " problem(s)):" + problems);
}

}  // namespace planb
