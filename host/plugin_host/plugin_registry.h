// Finds, loads and indexes plugins (Boost.DLL). Every regular file named libplanb_*.so in the plugin directories
// is loaded; a file that cannot be loaded, is not a Plan B plugin, has another ABI version, a bad descriptor or
// repeats a name is skipped and recorded (failures()) so that the plugins that did load still serve.
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

// A plugin file that did not load, and why (both as they are: escape them, LogValue, to print them).
struct PluginFailure {
  std::string file;
  std::string reason;
};

class PluginRegistry {
 public:
  static constexpr const char* kFilePrefix = "libplanb_";

  // Loads every regular libplanb_*.so file of every directory (in name order). A missing or unreadable
  // directory is an error; a file that fails to load is recorded in failures() and skipped.
  Status LoadDirectories(const std::vector<std::string>& dirs);

  // Loading on demand, so that a command loads the plugins its maps name and not every file (process start):
  // ListDirectories finds the files as LoadDirectories would (the same errors) and loads none. LoadNamed loads the
  // listed files named for (kind, name) by the built-in convention, libplanb_<name>_store.so or _key.so, or
  // libplanb_<name>.so, and says whether a plugin of that kind and name is then loaded. LoadRest loads every
  // listed file not loaded yet, in order: what LoadDirectories does. A file that provides another name than its
  // own is found by LoadRest only.
  Status ListDirectories(const std::vector<std::string>& dirs);
  bool LoadNamed(PluginKind kind, std::string_view name);
  void LoadRest();
  // Whether listed files are left unloaded.
  bool HasUnloaded() const { return !unloaded_.empty(); }
  // Loads one file; an error names the file and why (nothing is recorded).
  Status LoadFile(const std::string& path);

  // The files LoadDirectories skipped, in load order.
  const std::vector<PluginFailure>& failures() const { return failures_; }
  // "; not loaded: FILE (REASON), ..." when files failed, else "": for errors about a missing plugin.
  std::string FailuresText() const;

  // nullptr when there is no plugin of that kind and name.
  const LoadedPlugin* Find(PluginKind kind, std::string_view name) const;
  // As Find, but a miss is a NotSupported Status listing the names that exist and the files that failed.
  Status Get(PluginKind kind, std::string_view name, const LoadedPlugin** out) const;

  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }

  // Where the plugins built or installed with this code live: for a program (planb, the tests),
  // <program dir>/../lib/planb/plugins; when the host is linked into a shared library (libplanb_reader.so in
  // <prefix>/lib), <library dir>/planb/plugins, or the program's directory when only that one exists.
  static std::string DefaultDirectory();

 private:
  // Loads `path`; on failure `*reason` says why (without the path).
  Status Load(const std::string& path, std::string* reason);

  // Loads `file`, recording a failure as LoadDirectories does.
  void LoadOrRecord(const std::string& file);

  std::vector<LoadedPlugin> plugins_;
  std::vector<PluginFailure> failures_;
  std::vector<std::string> unloaded_;  // listed, not loaded yet, in load order
};

const char* PluginKindName(PluginKind kind);

}  // namespace planb
