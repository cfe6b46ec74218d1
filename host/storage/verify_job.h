// What the verifier program (planb-verify, verifier_child.h) is asked to check, as its command line: where the
// extracted maps are and, per map, its config section and the plugin files that serve it on this node, so that a
// fresh program loads the same plugins and judges by the same rules. Both ends are this code, but the child still
// checks every argument: it is a program that anyone can start.
#pragma once

#include <string>
#include <vector>

#include "host/config/config.h"
#include "planb/status.h"

namespace planb {

struct VerifyMapJob {
  // The map's section; of it the child uses name, type, scheme, max_store_size, max_readers and plugin_options.
  MapConfig config;
  std::string type_file;    // the store type's plugin file
  std::string scheme_file;  // the key scheme's plugin file; empty for a type without a text key
};

struct VerifyJob {
  std::string dir;  // each map's LMDB file is <dir>/<map>/data.mdb
  std::vector<VerifyMapJob> maps;
};

// The arguments after the program's name:
//   DIR then, per map: --map NAME TYPE SCHEME TYPE_FILE SCHEME_FILE MAX_STORE_SIZE MAX_READERS OPTION_COUNT
//   followed by OPTION_COUNT pairs KEY VALUE.
std::vector<std::string> EncodeVerifyJob(const VerifyJob& job);
// Reads what EncodeVerifyJob wrote; kInvalidArgument naming the argument that is missing or malformed.
Status DecodeVerifyJob(const std::vector<std::string>& args, VerifyJob* job);

}  // namespace planb
