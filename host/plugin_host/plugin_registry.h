// Finds, loads and indexes plugins (Boost.DLL). Every *.so in the plugin directories is loaded; a file that
// is not a Plan B plugin, has another ABI version or repeats a name is refused with an error naming the file.
// Ownership: each LoadedPlugin keeps its shared_library alive; whatever a plugin creates must hold on to
// `library` (a shared_ptr) so the code outlives the objects. Thread-safety: immutable after loading.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "planb/plugin.h"
#include "planb/status.h"

namespace boost::dll {
class shared_library;
}

namespace planb {

class DescriptorCopy;

struct LoadedPlugin {
  const PluginDescriptor* descriptor = nullptr;  // the host's copy (descriptor_copy.h), not the plugin's own
  uint32_t abi_minor = 0;                        // the SDK minor it was built against
  std::string file;
  std::shared_ptr<const DescriptorCopy> copy;
  std::shared_ptr<boost::dll::shared_library> library;
};

class PluginRegistry {
 public:
  // Loads every *.so file of every directory (in name order). Missing directories are an error.
  Status LoadDirectories(const std::vector<std::string>& dirs);
  Status LoadFile(const std::string& path);

  // nullptr when there is no plugin of that kind and name.
  const LoadedPlugin* Find(PluginKind kind, std::string_view name) const;
  // As Find, but a miss is a NotSupported Status listing the names that exist.
  Status Get(PluginKind kind, std::string_view name, const LoadedPlugin** out) const;

  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }

  // Where the plugins built or installed with this code live: for a program (planb, the tests),
  // <program dir>/../lib/planb/plugins; when the host is linked into a shared library (libplanb_reader.so in
  // <prefix>/lib), <library dir>/planb/plugins, or the program's directory when only that one exists.
  static std::string DefaultDirectory();

 private:
  std::vector<LoadedPlugin> plugins_;
};

const char* PluginKindName(PluginKind kind);

}  // namespace planb
