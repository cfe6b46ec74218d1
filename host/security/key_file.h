// Key files (docs/security.md "Key files"). `planb keygen NAME` writes two:
//   NAME.key  mode 0600, the secret; on-disk format (change it only with a version line):
//               # Plan B CURVE secret key NAME: keep it private (mode 0600). Its public key is in NAME.pub.
//               public_key = Z85
//               secret_key = Z85
//   NAME.pub  the public key: one line of Z85 and a newline, to paste into other nodes' configs.
#pragma once

#include <string>
#include <string_view>

#include "host/security/curve_key.h"
#include "planb/status.h"

namespace planb {

// Letters, digits, '-', '_' and '.', not starting with '.', at most 200 characters.
bool IsValidKeyName(std::string_view name);

// Generates a key pair and writes DIR/NAME.key (0600) and DIR/NAME.pub (0644, the umask may narrow it). Both are
// created with O_EXCL: when either exists nothing is written or overwritten; on any failure nothing is left
// behind. `key_path` and `pub_path` get the paths written.
Status WriteKeyPair(const std::string& dir, const std::string& name, CurveKeyPair* pair, std::string* key_path,
                    std::string* pub_path);

// Reads a NAME.key file: a regular file of at most 4 KiB, readable by its owner alone (any group or other
// permission bit is refused: a secret others could read is no longer a secret), holding both keys once each, the
// public key being that of the secret. Errors start with `path`.
Status ReadKeyFile(const std::string& path, CurveKeyPair* pair);

}  // namespace planb
