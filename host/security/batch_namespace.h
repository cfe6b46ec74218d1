// Whose a batch id is. With CURVE, every batch id a client sends starts with its namespace, derived from its public
// key: "key-" and the first 16 bytes of the key in hex, then "/". A node refuses an upload whose id is outside the
// sender's namespaces (one per key of its [client.NAME] section), so no client can take, pre-empt or be answered
// "already merged" for another client's batch ids, however it learns or guesses them. A load computes its ids in
// its own key's namespace, so a retry from the same client is still the same batch. Without CURVE, every sender
// shares one namespace, as it shares every right (docs/security.md).
#pragma once

#include <string>
#include <string_view>

namespace planb {

// "key-<32 hex digits>/" for a valid Z85 public key; "" for anything else.
std::string BatchNamespace(std::string_view z85_public_key);

}  // namespace planb
