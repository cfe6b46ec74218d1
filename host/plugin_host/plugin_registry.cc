#include "host/plugin_host/plugin_registry.h"

#include "host/plugin_host/descriptor_copy.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <system_error>

namespace planb {

namespace fs = std::filesystem;

const char* PluginKindName(PluginKind kind) {
  switch (kind) {
    case PluginKind::kStoreType: return "type";
    case PluginKind::kKeyScheme: return "scheme";
  }
  return "unknown";
}

namespace {

// The shared library holding this code when the host is linked into one (libplanb_reader.so), else "" (the
// host is part of the program). The main program's link map is the one with an empty name.
std::string HostLibraryPath() {
  Dl_info info;
  link_map* map = nullptr;
  void* self = reinterpret_cast<void*>(&HostLibraryPath);
  if (::dladdr1(self, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 || map == nullptr) return "";
  if (map->l_name == nullptr || map->l_name[0] == '\0') return "";
  return map->l_name;
}

}  // namespace

std::string PluginRegistry::DefaultDirectory() {
  std::error_code ec;
  fs::path program = boost::dll::program_location(ec);
  const std::string beside_program =
      ec ? std::string("/usr/local/") + PLANB_PLUGIN_SUBDIR
         : (program.parent_path().parent_path() / PLANB_PLUGIN_SUBDIR).lexically_normal().string();
  const std::string library = HostLibraryPath();
  if (library.empty()) return beside_program;
  // PLANB_PLUGIN_SUBDIR is <libdir>/planb/plugins and the library is installed in <prefix>/<libdir>, so its
  // plugins are the last two parts of the subdirectory, beside it.
  const fs::path subdir(PLANB_PLUGIN_SUBDIR);
  const fs::path library_dir = fs::absolute(library, ec).parent_path();
  const fs::path beside_library =
      (library_dir / subdir.parent_path().filename() / subdir.filename()).lexically_normal();
  if (fs::is_directory(beside_library, ec) || !fs::is_directory(beside_program, ec)) return beside_library.string();
  return beside_program;
}

Status PluginRegistry::LoadDirectories(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return Status::Invalid("plugin directory " + dir + " does not exist");
    std::vector<std::string> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".so") files.push_back(entry.path().string());
    }
    if (ec) return Status::IOError("reading plugin directory " + dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) PLANB_RETURN_IF_ERROR(LoadFile(file));
  }
  return Status::Ok();
}

Status PluginRegistry::LoadFile(const std::string& path) {
  auto library = std::make_shared<boost::dll::shared_library>();
  try {
    library->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return Status::Invalid("plugin " + path + ": cannot be loaded: " + e.what());
  }
  if (!library->has(kPluginSymbol)) {
    return Status::Invalid("plugin " + path + ": not a Plan B plugin (no '" + kPluginSymbol + "' symbol)");
  }
  const PluginDescriptor* raw = library->get<PluginEntryPoint>(kPluginSymbol)();
  if (raw == nullptr) return Status::Invalid("plugin " + path + ": its entry point returned no descriptor");
  std::unique_ptr<DescriptorCopy> copy;
  PLANB_RETURN_IF_ERROR(DescriptorCopy::Copy(raw, path, &copy));
  const PluginDescriptor* d = &copy->descriptor();
  if (const LoadedPlugin* other = Find(d->kind, d->name)) {
    return Status::Invalid("plugin " + path + ": " + PluginKindName(d->kind) + " '" + d->name +
                           "' is already provided by " + other->file);
  }
  plugins_.push_back(LoadedPlugin{d, raw->abi_minor, path, std::move(copy), std::move(library)});
  return Status::Ok();
}

const LoadedPlugin* PluginRegistry::Find(PluginKind kind, std::string_view name) const {
  for (const LoadedPlugin& p : plugins_) {
    if (p.descriptor->kind == kind && name == p.descriptor->name) return &p;
  }
  return nullptr;
}

Status PluginRegistry::Get(PluginKind kind, std::string_view name, const LoadedPlugin** out) const {
  *out = Find(kind, name);
  if (*out != nullptr) return Status::Ok();
  std::string known;
  for (const LoadedPlugin& p : plugins_) {
    if (p.descriptor->kind != kind) continue;
    known += known.empty() ? "" : ", ";
    known += p.descriptor->name;
  }
  return Status::NotSupported(std::string("unknown ") + PluginKindName(kind) + " '" + std::string(name) +
                              "' (known: " + (known.empty() ? "none" : known) + ")");
}

}  // namespace planb
