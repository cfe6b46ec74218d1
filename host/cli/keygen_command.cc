// planb keygen NAME [--dir DIR]: a CURVE key pair for a node or client (docs/security.md "Key files").
#include <iostream>

#include "host/cli/commands.h"
#include "host/security/key_file.h"

namespace planb {

int RunKeygenCommand(const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string dir = cli.dir.value_or(".");
  if (dir.empty()) {
    err << "planb: keygen: --dir is empty\n";
    return kExitError;
  }
  CurveKeyPair pair;
  std::string key_path;
  std::string pub_path;
  const Status s = WriteKeyPair(dir, cli.args.front(), &pair, &key_path, &pub_path);
  if (!s.ok()) {
    err << "planb: keygen: " << s.message() << "\n";
    return kExitError;
  }
  out << "secret key: " << key_path << " (mode 0600; keep it on this machine only)\n"
      << "public key: " << pub_path << "\n"
      << pair.public_key << "\n";
  return kExitOk;
}

}  // namespace planb
