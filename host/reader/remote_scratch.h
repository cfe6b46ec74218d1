// What a thread keeps for one map of a Reader in remote mode (MapContext::remote, reader_remote.cc): the READ
// answers of its last lookup call, which that call's results view (values, fields, messages) until the thread's
// next lookup of the map, and the buffers the next call reuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "host/commands/lookup_answers.h"
#include "host/transfer/protocol.h"
#include "planb/reader.h"
#include "planb/store.h"

namespace planb {

struct RemoteReply {
  std::string out, err, node;    // the READ_RESULT's stdout and stderr, and the node that answered
  LookupAnswers answers;         // views `out`
  std::vector<FieldValue> rows;  // per found answer, one FieldValue per field of the type (own ones filled)
};

struct RemoteScratch {
  // Keys of one instant, in the order first seen: `now` (the node's clock) or `ms`.
  struct Group {
    bool now = true;
    int64_t ms = 0;
    std::vector<size_t> positions;  // of the call's keys
  };
  std::vector<Group> groups;
  size_t groups_used = 0;
  std::vector<std::string> key_texts;
  std::deque<RemoteReply> replies;  // a deque: growing it leaves the replies that results view in place
  size_t replies_used = 0;
  std::deque<std::string> errors;   // messages results point to

  RemoteReply& NextReply() {
    if (replies_used == replies.size()) replies.emplace_back();
    return replies[replies_used++];
  }
};

}  // namespace planb
