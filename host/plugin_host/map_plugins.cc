#include "host/plugin_host/map_plugins.h"

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <vector>

#include "host/common/log_text.h"

namespace planb {
namespace {

bool Declares(const PluginDescriptor* d, const std::string& option) {
  if (d == nullptr) return false;
  for (uint32_t i = 0; i < d->option_count; ++i) {
    if (option == d->options[i].name) return true;
  }
  return false;
}

std::string DeclaredOptions(const PluginDescriptor* type, const PluginDescriptor* scheme) {
  std::string names;
  for (const PluginDescriptor* d : {type, scheme}) {
    if (d == nullptr) continue;
    for (uint32_t i = 0; i < d->option_count; ++i) names += std::string(names.empty() ? "" : ", ") + d->options[i].name;
  }
  return names.empty() ? "none" : names;
}

// Every option `d` declares with the value `config` gives it, else its default (one with neither is left out),
// as the plugin ABI's array (views into `config` and the descriptor).
std::vector<PluginOption> OptionsFor(const PluginDescriptor* d, const MapConfig& config) {
  std::vector<PluginOption> options;
  for (uint32_t i = 0; i < d->option_count; ++i) {
    const OptionSpec& spec = d->options[i];
    auto it = std::find_if(config.plugin_options.begin(), config.plugin_options.end(),
                           [&spec](const auto& option) { return option.first == spec.name; });
    if (it != config.plugin_options.end()) {
      options.push_back(PluginOption{spec.name, it->second.c_str()});
    } else if (spec.default_value != nullptr) {
      options.push_back(PluginOption{spec.name, spec.default_value});
    }
  }
  return options;
}

std::vector<PluginOption> DefaultOptions(const PluginDescriptor* d) { return OptionsFor(d, MapConfig()); }

std::string Label(const LoadedPlugin& plugin) {
  return std::string(plugin.descriptor->kind == PluginKind::kStoreType ? "store type '" : "scheme '") +
         plugin.descriptor->name + "' (" + LogValue(plugin.file) + ")";
}

// Calls a plugin's create_* under a guard: an exception is an error naming the plugin.
template <typename T>
Status GuardedCreate(const std::string& label, T* (*create)(const PluginArgs*, ErrorBuffer*), const PluginArgs& args,
                     ErrorBuffer* error, T** out) {
  try {
    *out = create(&args, error);
  } catch (const std::exception& e) {
    return Status(Code::kInternal, ThrewText(label, "create", e.what()));
  } catch (...) {
    return Status(Code::kInternal, ThrewText(label, "create", nullptr));
  }
  return Status::Ok();
}

template <typename T>
void GuardedDestroy(void (*destroy)(T*), T* object) {
  try {
    destroy(object);
  } catch (...) {
    // Nothing to do: the object is gone or leaked either way, and a destructor must not throw.
  }
}

// Whether scheme `d`, with its default options, can serve a store type appending `suffix_size` bytes to each key.
bool ServesWithDefaults(const PluginDescriptor& d, const std::string& map_name, uint32_t suffix_size) {
  PluginArgs args;
  args.map_name = map_name.c_str();
  args.key_suffix_size = suffix_size;
  std::vector<PluginOption> options = DefaultOptions(&d);
  args.options = options.data();
  args.option_count = static_cast<uint32_t>(options.size());
  ErrorBuffer error;
  KeyScheme* scheme = nullptr;
  if (!GuardedCreate("", d.create_scheme, args, &error, &scheme).ok() || scheme == nullptr) return false;
  GuardedDestroy(d.destroy_scheme, scheme);
  return true;
}

// After `scheme` failed: when it cannot serve `type` even with its defaults, the schemes that can.
std::string SchemesThatWould(const PluginRegistry& registry, const PluginDescriptor& scheme,
                             const PluginDescriptor& type, const std::string& map_name) {
  if (ServesWithDefaults(scheme, map_name, type.key_suffix_size)) return "";  // an option's fault, said already
  std::string names;
  for (const LoadedPlugin& p : registry.plugins()) {
    if (p.descriptor->kind != PluginKind::kKeyScheme || p.descriptor == &scheme) continue;
    if (ServesWithDefaults(*p.descriptor, map_name, type.key_suffix_size)) {
      names += (names.empty() ? "" : ", ") + std::string(p.descriptor->name);
    }
  }
  return "; schemes that can serve type '" + std::string(type.name) + "': " + (names.empty() ? "none" : names);
}

}  // namespace

Status MapPlugins::Create(const MapConfig& config, const PluginRegistry& registry,
                          std::unique_ptr<MapPlugins>* out) {
  const std::string where = "[map." + config.name + "]";
  std::unique_ptr<MapPlugins> map(new MapPlugins(config));
  const LoadedPlugin* type = nullptr;
  PLANB_RETURN_IF_ERROR(registry.Get(PluginKind::kStoreType, config.type, &type).WithContext(where));
  map->type_ = *type;
  const PluginDescriptor* td = type->descriptor;

  if (config.retain && (td->maintenance & kMaintainRetain) == 0) {
    return Status::Invalid(where + ": retain_for: type '" + config.type +
                           "' has no time on its rows, so nothing can age out (remove retain_for)");
  }
  if (config.condense && (td->maintenance & kMaintainCondense) == 0) {
    return Status::Invalid(where + ": condense: type '" + config.type +
                           "' has nothing to condense (only temporal types and sessions do; remove condense)");
  }
  if (td->uses_key_scheme) {
    std::string scheme_name = config.scheme.empty() ? kDefaultScheme : config.scheme;
    const LoadedPlugin* scheme = nullptr;
    PLANB_RETURN_IF_ERROR(registry.Get(PluginKind::kKeyScheme, scheme_name, &scheme).WithContext(where));
    map->scheme_plugin_ = *scheme;
  } else if (!config.scheme.empty()) {
    return Status::Invalid(where + ": type '" + config.type + "' has no text key, so it takes no scheme (remove " +
                           "'scheme = " + config.scheme + "')");
  }
  const PluginDescriptor* sd = map->scheme_descriptor();
  for (const auto& [name, value] : config.plugin_options) {
    if (!Declares(td, name) && !Declares(sd, name)) {
      return Status::Invalid(where + ": unknown key '" + name + "' (type '" + config.type + "'" +
                             (sd ? std::string(" and scheme '") + sd->name + "'" : std::string()) +
                             " take: " + DeclaredOptions(td, sd) + ")");
    }
  }

  ErrorBuffer error;
  if (sd != nullptr) {
    std::vector<PluginOption> options = OptionsFor(sd, config);
    PluginArgs args;
    args.map_name = config.name.c_str();
    args.options = options.data();
    args.option_count = static_cast<uint32_t>(options.size());
    args.key_suffix_size = td->key_suffix_size;
    const std::string label = Label(map->scheme_plugin_);
    PLANB_RETURN_IF_ERROR(GuardedCreate(label, sd->create_scheme, args, &error, &map->scheme_).WithContext(where));
    if (map->scheme_ == nullptr) {
      return Status(Code::kInvalidArgument, where + ": scheme '" + sd->name + "': " + error.message +
                                                SchemesThatWould(registry, *sd, *td, config.name));
    }
    PLANB_RETURN_IF_ERROR(
        GuardedScheme::Create(map->scheme_, label, map->scheme_plugin_.abi_minor, &map->guarded_scheme_)
            .WithContext(where));
    map->scheme_tables_in_use_ = map->guarded_scheme_->TablesInUse();
    if (map->scheme_tables_in_use_ > sd->table_count) {
      return Status(Code::kInternal, where + ": scheme '" + sd->name + "' uses " +
                                         std::to_string(map->scheme_tables_in_use_) + " tables but declares " +
                                         std::to_string(sd->table_count) + " (a bug in the plugin)");
    }
  }
  std::vector<PluginOption> options = OptionsFor(td, config);
  PluginArgs args;
  args.map_name = config.name.c_str();
  args.options = options.data();
  args.option_count = static_cast<uint32_t>(options.size());
  args.scheme = map->guarded_scheme_.get();
  const std::string label = Label(map->type_);
  PLANB_RETURN_IF_ERROR(GuardedCreate(label, td->create_store, args, &error, &map->store_).WithContext(where));
  if (map->store_ == nullptr) {
    return Status(Code::kInvalidArgument, where + ": type '" + config.type + "': " + error.message);
  }
  map->guarded_store_ = std::make_unique<GuardedStore>(map->store_, label, map->guarded_scheme_.get());
  *out = std::move(map);
  return Status::Ok();
}

MapPlugins::~MapPlugins() {
  // The store may use the scheme until it is gone.
  if (store_ != nullptr) GuardedDestroy(type_.descriptor->destroy_store, store_);
  if (scheme_ != nullptr) GuardedDestroy(scheme_plugin_.descriptor->destroy_scheme, scheme_);
}

std::string MapPlugins::Labels() const {
  std::string labels = guarded_store_->label();
  if (guarded_scheme_ != nullptr) labels += ", " + guarded_scheme_->label();
  return labels;
}

}  // namespace planb
