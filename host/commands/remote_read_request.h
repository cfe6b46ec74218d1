// A remote READ's typed request (protocol::ReadRequest, docs/protocol.md) to and from the read commands' own
// requests: the client makes one from what its command line asked, the storage node turns the one it decoded
// into the request RunLookup or RunQuery takes. The decoder has bounded and checked every field already.
#pragma once

#include "host/commands/read_commands.h"
#include "host/transfer/protocol.h"

namespace planb {

protocol::ReadFormat ReadFormatOf(OutputFormat format);
protocol::ReadFormat ReadFormatOf(LookupFormat format);

// REQUIRES: `read.kind` is kLookup (LookupRequestFrom) or kQuery (QueryRequestFrom), and its format one that kind
// prints (DecodeRead checks both).
LookupRequest LookupRequestFrom(const protocol::ReadRequest& read);
QueryRequest QueryRequestFrom(const protocol::ReadRequest& read);

}  // namespace planb
