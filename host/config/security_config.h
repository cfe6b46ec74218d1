// The keys-and-rights part of the config (docs/security.md): secret_key_file, allow_plaintext, [client.NAME]
// sections, and the cross-checks over them and the nodes' public keys. Internal to host/config.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "host/config/config.h"

namespace planb {

// secret_key_file = PATH: reads and checks the key file now (host/security/key_file.h), so that a node never
// starts with a key it cannot use. Relative paths resolve against `base_dir`.
Status ApplySecretKeyFile(const std::string& value, const std::string& base_dir, Config* config);
// A [client.NAME] section: public_key (required), allow (required), maps (optional).
Status ApplyClientSection(const std::string& name, const std::vector<std::pair<std::string, std::string>>& entries,
                          Config* config);
// A [node.NAME] public_key value: one valid Z85 key.
Status ParsePublicKey(const std::string& value, std::string* key);
// After every key and section: each client's maps are configured, no key is in two clients, every node has a
// public_key or none has, and keys (a node's or a client's) come with this node's own secret_key_file.
Status FinishSecurity(Config* config);

}  // namespace planb
