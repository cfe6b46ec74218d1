// Whether a plugin file may be loaded: dlopen runs its constructors with the host's rights (often root on a
// storage node), so a file that another account could have written is refused before it is opened, as ssh's
// StrictModes refuses an authorized_keys file others can change.
#pragma once

#include <string>

#include "planb/status.h"

namespace planb {

// Ok when the file `path` (after resolving symlinks), the directory holding it and the directory it was named in
// are each owned by root or by this process's user and writable by neither group nor others. Otherwise an error
// naming the offending path, its mode and owner, and how to fix it; `*reason` gets the same text without the
// plugin's own path in front.
Status CheckPluginFileTrust(const std::string& path, std::string* reason);

}  // namespace planb
