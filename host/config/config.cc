#include "host/config/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "host/common/http_bind.h"
#include "host/common/iso_time.h"
#include "host/common/numbers.h"
#include "host/config/cluster_config.h"
#include "host/config/ini_reader.h"
#include "host/config/security_config.h"

namespace planb {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

constexpr size_t kMaxMapNameLength = 128;
constexpr uint64_t kMinStoreSize = uint64_t{1} << 20;  // smaller is a forgotten unit ("10" for 10GiB)
constexpr uint32_t kMaxReadersLimit = 32767;
constexpr uint64_t kMinLookupCacheSize = 256;  // one slot of the Reader's hot-key cache (hot_key_cache.h)

// Relative paths in the file mean "next to the file", not "wherever planb was started".
std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

Status RequireValue(const std::string& value) {
  return value.empty() ? Status::Invalid("empty value") : Status::Ok();
}

bool ParseFileModeImpl(std::string_view text, uint32_t* mode) {
  if (text.size() < 3 || text.size() > 4) return false;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return false;
    value = value * 8 + static_cast<uint32_t>(c - '0');
  }
  // Group or others' write bits would let another account plant or swap shards, batches and snapshot zips that
  // this node then serves and merges (and directories would get 0777), so they are refused with the rest.
  if (value > 0777 || (value & 0600) != 0600 || (value & 0022) != 0) return false;
  *mode = value;
  return true;
}

// A duration of at least `min_ms` (short form 30s / 1h / 7d or ISO-8601 P7D); a minus sign is refused.
Status ParseMinDuration(const std::string& value, int64_t min_ms, int64_t* ms) {
  int64_t parsed = 0;
  if (!ParseDuration(value, &parsed)) {
    return Status::Invalid("'" + value + "' is not a duration (e.g. 30s, 1h, 7d or P7D; not negative)");
  }
  if (parsed < min_ms) {
    return Status::Invalid("'" + value + "' is below the minimum of " + std::to_string(min_ms) + "ms");
  }
  *ms = parsed;
  return Status::Ok();
}

// --- Top-level keys: one entry per key. ---

struct TopLevelKey {
  const char* name;
  bool repeatable;  // each line adds one value; otherwise a second line is an error
  Status (*apply)(const std::string& value, const std::string& base_dir, Config* config);
};

constexpr TopLevelKey kTopLevelKeys[] = {
    {"home", false,
     [](const std::string& value, const std::string& base_dir, Config* config) {
       PLANB_RETURN_IF_ERROR(RequireValue(value));
       config->home = Resolve(base_dir, value);
       return Status::Ok();
     }},
    {"plugin_dir", true,
     [](const std::string& value, const std::string& base_dir, Config* config) {
       PLANB_RETURN_IF_ERROR(RequireValue(value));
       config->plugin_dirs.push_back(Resolve(base_dir, value));
       return Status::Ok();
     }},
    {"file_mode", false,
     [](const std::string& value, const std::string&, Config* config) {
       if (!ParseFileMode(value, &config->file_mode)) {
         return Status::Invalid("'" + value +
                                "' is not a file mode: octal permission bits such as 0640 or 0600, at most 0755, "
                                "with owner read and write (0600) and no write for group or others");
       }
       return Status::Ok();
     }},
    {"maintain_interval", false,
     [](const std::string& value, const std::string&, Config* config) {
       return ParseMinDuration(value, 1000, &config->maintain_interval_ms);
     }},
    {"delete_orphans_after", false,
     [](const std::string& value, const std::string&, Config* config) {
       return ParseMinDuration(value, 0, &config->delete_orphans_after_ms);
     }},
    {"merge_threads", false,
     [](const std::string& value, const std::string&, Config* config) {
       uint64_t count = 0;
       if (!ParseCount(value, 16, &count) || count == 0) {
         return Status::Invalid("'" + value + "' is not a count from 1 to 16");
       }
       config->merge_threads = static_cast<int>(count);
       return Status::Ok();
     }},
    {"secret_key_file", false, ApplySecretKeyFile},
    {"metrics_bind", false,
     [](const std::string& value, const std::string&, Config* config) {
       HttpBind parsed;
       PLANB_RETURN_IF_ERROR(ParseHttpBind(value, &parsed));
       config->operations.metrics_bind = value;
       return Status::Ok();
     }},
    {"ready_min_free_disk", false,
     [](const std::string& value, const std::string&, Config* config) {
       uint64_t bytes = 0;
       if (!ParseByteSize(value, &bytes)) return Status::Invalid("'" + value + "' is not a size (e.g. 1GiB, 512MiB)");
       config->operations.ready_min_free_disk = bytes;
       return Status::Ok();
     }},
    {"log_level", false,
     [](const std::string& value, const std::string&, Config* config) {
       if (!ParseLogLevel(value, &config->operations.log_level)) {
         return Status::Invalid("'" + value + "' is not a log level (error, warn, info, debug)");
       }
       return Status::Ok();
     }},
    {"log_format", false,
     [](const std::string& value, const std::string&, Config* config) {
       if (!ParseLogFormat(value, &config->operations.log_format)) {
         return Status::Invalid("'" + value + "' is not a log format (text, json)");
       }
       return Status::Ok();
     }},
    {"log_file", false,
     [](const std::string& value, const std::string& base_dir, Config* config) {
       PLANB_RETURN_IF_ERROR(RequireValue(value));
       config->operations.log_file = Resolve(base_dir, value);
       return Status::Ok();
     }},
    {"allow_plaintext", false,
     [](const std::string& value, const std::string&, Config* config) {
       if (value != "true" && value != "false") return Status::Invalid("'" + value + "' is not true or false");
       config->cluster.allow_plaintext = value == "true";
       return Status::Ok();
     }},
};

Status ApplyTopLevel(const Entries& entries, const std::string& base_dir, Config* config) {
  std::set<std::string> seen;
  for (const auto& [key, value] : entries) {
    const TopLevelKey* known = nullptr;
    for (const TopLevelKey& k : kTopLevelKeys) {
      if (key == k.name) known = &k;
    }
    const bool repeatable = known != nullptr && known->repeatable;
    if (!seen.insert(key).second && !repeatable) return Status::Invalid(key + ": given twice");
    if (known != nullptr) {
      PLANB_RETURN_IF_ERROR(known->apply(value, base_dir, config).WithContext(key));
      continue;
    }
    bool cluster_key = false;
    PLANB_RETURN_IF_ERROR(ApplyClusterKey(key, value, &config->cluster, &cluster_key).WithContext(key));
    if (!cluster_key) {
      std::string names;
      for (const TopLevelKey& k : kTopLevelKeys) names += std::string(names.empty() ? "" : ", ") + k.name;
      for (const std::string& k : ClusterKeyNames()) names += ", " + k;
      return Status::Invalid(key + ": unknown top-level key (known: " + names + ")");
    }
  }
  return Status::Ok();
}

// --- [map.NAME] sections: one entry per key the host itself reads. ---

Status ParseMaxReaders(const std::string& value, uint32_t* readers) {
  uint64_t n = 0;
  if (!ParseCount(value, kMaxReadersLimit, &n) || n < 1) {
    return Status::Invalid("'" + value + "' is not a reader count (1..32767)");
  }
  *readers = static_cast<uint32_t>(n);
  return Status::Ok();
}

Status ParseBool(const std::string& value, bool* out) {
  if (value != "true" && value != "false") return Status::Invalid("'" + value + "' is not true or false");
  *out = value == "true";
  return Status::Ok();
}

struct MapKey {
  const char* name;
  Status (*apply)(const std::string& value, MapConfig* map);
};

constexpr MapKey kMapKeys[] = {
    {"type",
     [](const std::string& value, MapConfig* map) {
       PLANB_RETURN_IF_ERROR(RequireValue(value));
       map->type = value;
       return Status::Ok();
     }},
    {"scheme",
     [](const std::string& value, MapConfig* map) {
       PLANB_RETURN_IF_ERROR(RequireValue(value));
       map->scheme = value;
       return Status::Ok();
     }},
    {"max_store_size",
     [](const std::string& value, MapConfig* map) {
       uint64_t bytes = 0;
       if (!ParseByteSize(value, &bytes)) {
         return Status::Invalid("'" + value + "' is not a size (e.g. 10GiB, 512MiB, 1048576)");
       }
       if (bytes < kMinStoreSize) return Status::Invalid("'" + value + "' is below the minimum of 1MiB");
       map->max_store_size = bytes;
       return Status::Ok();
     }},
    {"read_index_max_size",
     [](const std::string& value, MapConfig* map) {
       if (!ParseByteSize(value, &map->read_index_max_size)) {
         return Status::Invalid("'" + value + "' is not a size (e.g. 256MiB, 0 for no read index)");
       }
       return Status::Ok();
     }},
    {"lookup_cache_size",
     [](const std::string& value, MapConfig* map) {
       if (!ParseByteSize(value, &map->lookup_cache_size)) {
         return Status::Invalid("'" + value + "' is not a size (e.g. 1MiB, 0 for no cache)");
       }
       if (map->lookup_cache_size != 0 && map->lookup_cache_size < kMinLookupCacheSize) {
         return Status::Invalid("'" + value + "' is below the smallest cache, 256 bytes (or 0 for none)");
       }
       return Status::Ok();
     }},
    {"max_readers",
     [](const std::string& value, MapConfig* map) { return ParseMaxReaders(value, &map->max_readers); }},
    {"synchronise_merge",
     [](const std::string& value, MapConfig* map) { return ParseBool(value, &map->synchronise_merge); }},
    {"condense", [](const std::string& value, MapConfig* map) { return ParseBool(value, &map->condense); }},
    {"condense_after",
     [](const std::string& value, MapConfig* map) { return ParseMinDuration(value, 0, &map->condense_after_ms); }},
    {"retain_for",
     [](const std::string& value, MapConfig* map) {
       map->retain = !value.empty();  // empty: keep forever
       return value.empty() ? Status::Ok() : ParseMinDuration(value, 1, &map->retain_for_ms);
     }},
    {"reclaim_free_share",
     [](const std::string& value, MapConfig* map) {
       char* end = nullptr;
       errno = 0;
       const double share = value.empty() ? -1 : std::strtod(value.c_str(), &end);
       if (value.empty() || errno != 0 || end != value.c_str() + value.size() || !(share >= 0 && share <= 1)) {
         return Status::Invalid("'" + value + "' is not a share between 0 and 1 (e.g. 0.5)");
       }
       map->reclaim_free_share = share;
       return Status::Ok();
     }},
};

Status ApplyMapSection(const std::string& name, const Entries& entries, Config* config) {
  if (!IsValidMapName(name)) {
    return Status::Invalid("invalid map name '" + name +
                           "' (lower case letters, digits and _, starting with a letter; at most 128 characters)");
  }
  MapConfig map;
  map.name = name;
  for (const auto& [key, value] : entries) {
    const MapKey* known = nullptr;
    for (const MapKey& k : kMapKeys) {
      if (key == k.name) known = &k;
    }
    if (known == nullptr) {
      map.plugin_options.emplace_back(key, value);  // checked against the plugins once they are loaded
    } else {
      PLANB_RETURN_IF_ERROR(known->apply(value, &map).WithContext(key));
    }
  }
  if (map.type.empty()) return Status::Invalid("type: missing (the store-type plugin name, e.g. type = state)");
  config->maps.emplace(name, std::move(map));
  return Status::Ok();
}

// --- Section kinds: [KIND.NAME], one entry per kind. ---

struct SectionKind {
  const char* kind;
  Status (*apply)(const std::string& name, const Entries& entries, Config* config);
};

constexpr SectionKind kSectionKinds[] = {
    {"map", ApplyMapSection},
    {"node",
     [](const std::string& name, const Entries& entries, Config* config) {
       return ApplyNodeSection(name, entries, &config->cluster);
     }},
    {"client", ApplyClientSection},
};

Status ApplySection(const IniSection& section, Config* config) {
  // Keys repeat only at top level (plugin_dir); in a section a second line is a typo or a paste.
  std::set<std::string> keys;
  for (const auto& entry : section.entries) {
    if (!keys.insert(entry.first).second) return Status::Invalid(entry.first + ": given twice");
  }
  const size_t dot = section.header.find('.');
  const std::string kind = section.header.substr(0, dot);
  for (const SectionKind& k : kSectionKinds) {
    if (kind != k.kind) continue;
    const std::string name = dot == std::string::npos ? "" : section.header.substr(dot + 1);
    if (name.empty()) return Status::Invalid("section needs a name, as in [" + kind + ".NAME]");
    return k.apply(name, section.entries, config);
  }
  std::string known;
  for (const SectionKind& k : kSectionKinds) {
    known += std::string(known.empty() ? "" : ", ") + "[" + k.kind + ".NAME]";
  }
  return Status::Invalid("unknown section kind '" + kind + "' (known: " + known + ")");
}

}  // namespace

const MapConfig* Config::FindMap(std::string_view name) const {
  const auto it = maps.find(NormaliseMapName(name));
  return it == maps.end() ? nullptr : &it->second;
}

bool IsValidMapName(std::string_view name) {
  if (name.empty() || name.size() > kMaxMapNameLength) return false;
  if (name.front() < 'a' || name.front() > 'z') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::string NormaliseMapName(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// Builds into a fresh Config so that `config` is left as it was on any error.
Status ParseConfig(std::string_view name, std::string_view text, const std::string& base_dir, Config* config) {
  const std::string file(name);
  std::vector<IniSection> sections;
  PLANB_RETURN_IF_ERROR(ReadIni(file, text, &sections));
  Config result;
  result.path = file;
  PLANB_RETURN_IF_ERROR(ApplyTopLevel(sections.front().entries, base_dir, &result).WithContext(file));
  std::set<std::string> headers;
  for (size_t i = 1; i < sections.size(); ++i) {
    const std::string where = file + ": [" + sections[i].header + "]";
    if (!headers.insert(sections[i].header).second) return Status::Invalid(where + ": section given twice");
    PLANB_RETURN_IF_ERROR(ApplySection(sections[i], &result).WithContext(where));
  }
  PLANB_RETURN_IF_ERROR(FinishCluster(&result.cluster).WithContext(file));
  PLANB_RETURN_IF_ERROR(FinishSecurity(&result).WithContext(file));
  *config = std::move(result);
  return Status::Ok();
}

Status LoadConfig(const std::string& path, Config* config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  // read() turns a failed read (EISDIR: a directory opens fine on Linux) into badbit.
  std::string text;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) text.append(buffer, static_cast<size_t>(in.gcount()));
  if (in.bad()) return Status::IOError(path + ": cannot read: " + std::strerror(errno));
  return ParseConfig(path, text, std::filesystem::path(path).parent_path().string(), config);
}

bool ParseFileMode(std::string_view text, uint32_t* mode) { return ParseFileModeImpl(text, mode); }

}  // namespace planb
