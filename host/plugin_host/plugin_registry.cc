#include "host/plugin_host/plugin_registry.h"

#include "host/common/crash_report.h"
#include "host/common/log_text.h"
#include "host/plugin_host/descriptor_copy.h"
#include "host/plugin_host/plugin_file_trust.h"

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

bool IsPluginFileName(const std::string& name) {
  const std::string prefix = PluginRegistry::kFilePrefix;
  return name.size() > prefix.size() + 3 && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - 3, 3, ".so") == 0;
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
  PLANB_RETURN_IF_ERROR(ListDirectories(dirs));
  LoadRest();
  return Status::Ok();
}

Status PluginRegistry::ListDirectories(const std::vector<std::string>& dirs) {
  std::vector<std::string> listed;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return Status::Invalid("plugin directory " + LogValue(dir) + " does not exist");
    std::vector<std::string> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (IsPluginFileName(entry.path().filename().string()) && entry.is_regular_file(ec)) {
        files.push_back(entry.path().string());
      }
    }
    if (ec) return Status::IOError("reading plugin directory " + LogValue(dir) + ": " + ec.message());
    std::sort(files.begin(), files.end());
    listed.insert(listed.end(), files.begin(), files.end());
  }
  unloaded_.insert(unloaded_.end(), listed.begin(), listed.end());
  return Status::Ok();
}

bool PluginRegistry::LoadNamed(PluginKind kind, std::string_view name) {
  if (Find(kind, name) != nullptr) return true;
  const std::string stem = std::string(kFilePrefix) + std::string(name);
  const std::string own = stem + (kind == PluginKind::kStoreType ? "_store.so" : "_key.so");
  for (size_t i = 0; i < unloaded_.size();) {
    const std::string base = fs::path(unloaded_[i]).filename().string();
    if (base != own && base != stem + ".so") {
      ++i;
      continue;
    }
    const std::string file = unloaded_[i];
    unloaded_.erase(unloaded_.begin() + static_cast<std::ptrdiff_t>(i));
    LoadOrRecord(file);
  }
  return Find(kind, name) != nullptr;
}

void PluginRegistry::LoadRest() {
  std::vector<std::string> files;
  files.swap(unloaded_);
  for (const std::string& file : files) LoadOrRecord(file);
}

void PluginRegistry::LoadOrRecord(const std::string& file) {
  std::string reason;
  if (!Load(file, &reason).ok()) failures_.push_back(PluginFailure{file, reason});
}

Status PluginRegistry::LoadFile(const std::string& path) {
  std::string reason;
  const Status s = Load(path, &reason);
  if (s.ok()) return s;
  return Status(s.code(), "plugin " + LogValue(path) + ": " + reason);
}

std::string PluginRegistry::FailuresText() const {
  std::string text;
  for (const PluginFailure& f : failures_) {
    text += (text.empty() ? "; not loaded: " : ", ") + LogValue(f.file) + " (" + LogValue(f.reason) + ")";
  }
  return text;
}

Status PluginRegistry::Load(const std::string& path, std::string* reason) {
  auto fail = [reason](std::string why) {
    *reason = std::move(why);
    return Status::Invalid(*reason);
  };
  {
    std::string why;
    if (!CheckPluginFileTrust(path, &why).ok()) return fail(why);
  }
  // dlopen's own text says what is wrong (not an ELF file, an undefined symbol); Boost.DLL's error appends an
  // errno that has nothing to do with it. The handle only pins the file while Boost opens it again.
  // A file whose initialisers or entry point crash is named by the fatal-signal report (crash_report.h).
  const CrashScope crash_scope("loading plugin file " + LogValue(path) + " (its initialisers or entry point)");
  ::dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* text = ::dlerror();
    return fail(std::string("cannot be loaded: ") + (text != nullptr ? text : "dlopen failed"));
  }
  auto library = std::make_shared<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
  library->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  ::dlclose(handle);
  if (ec) return fail("cannot be loaded: " + ec.message());
  if (!library->has(kPluginSymbol)) return fail(std::string("not a Plan B plugin (no '") + kPluginSymbol + "' symbol)");
  const PluginDescriptor* raw = nullptr;
  try {
    raw = library->get<PluginEntryPoint>(kPluginSymbol)();
  } catch (const std::exception& e) {
    return fail(std::string("its entry point threw: ") + e.what());
  } catch (...) {
    return fail("its entry point threw a non-standard exception");
  }
  if (raw == nullptr) return fail("its entry point returned no descriptor");
  std::unique_ptr<DescriptorCopy> copy;
  const Status copied = DescriptorCopy::Copy(raw, path, &copy);
  if (!copied.ok()) {
    const std::string prefix = "plugin " + LogValue(path) + ": ";
    const std::string& m = copied.message();
    return fail(m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m);
  }
  const PluginDescriptor* d = &copy->descriptor();
  if (const LoadedPlugin* other = Find(d->kind, d->name)) {
    return fail(std::string(PluginKindName(d->kind)) + " '" + d->name + "' is already provided by " + other->file);
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
  return Status::NotSupported(std::string("unknown ") + PluginKindName(kind) + " '" + LogValue(name) +
                              "' (known: " + (known.empty() ? "none" : known) + FailuresText() + ")");
}

}  // namespace planb
