#include "host/storage/shard_meta.h"

#include <cstring>

#include "host/plugin_host/key_format.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

struct Field {
  const char* name;
  std::string ShardMeta::*member;
};
const Field kFields[] = {
    {"format", &ShardMeta::format}, {"map", &ShardMeta::map},
    {"type", &ShardMeta::type},     {"scheme", &ShardMeta::scheme},
    {"scheme_layout", &ShardMeta::scheme_layout},
};

constexpr const char* kTypeLayout = "type_layout";  // optional: see ShardMeta::type_layout
constexpr const char* kKeyFormatLayout = "key_format=";

std::string Versioned(const PluginDescriptor& d) { return std::string(d.name) + "/" + std::to_string(d.version); }

// "state/2" -> "state", "2"; without a '/' the whole text is the name.
void SplitVersioned(const std::string& text, std::string* name, std::string* version) {
  const size_t slash = text.rfind('/');
  *name = text.substr(0, slash);
  *version = slash == std::string::npos ? std::string() : text.substr(slash + 1);
}

// A layout as the config options that made it: "hash_bits=64" -> "hash_bits = 64" (several: ", " between).
std::string AsOptions(const std::string& layout) {
  std::string text;
  for (char c : layout) {
    if (c == '=') {
      text += " = ";
    } else if (c == ',') {
      text += ", ";
    } else {
      text += c;
    }
  }
  return text;
}

// One plugin's part of ShardMeta::Differences: its name, its version, then its layout.
void PluginDifference(const char* kind, const std::string& found, const std::string& expected,
                      const std::string& found_layout, const std::string& expected_layout, std::string* out,
                      bool* config_changed) {
  std::string found_name, found_version, expected_name, expected_version;
  SplitVersioned(found, &found_name, &found_version);
  SplitVersioned(expected, &expected_name, &expected_version);
  const auto add = [out](const std::string& text) { *out += (out->empty() ? "" : "; ") + text; };
  if (found_name != expected_name) {
    add(std::string("the map's ") + kind + " changed (" + (found_name.empty() ? "none" : found_name) + " to " +
        (expected_name.empty() ? "none" : expected_name) + ")");
    *config_changed = true;
    return;
  }
  if (found_version != expected_version) {
    const bool older = found_version.size() < expected_version.size() ||
                       (found_version.size() == expected_version.size() && found_version < expected_version);
    add(std::string("the layout of ") + kind + " " + expected_name + " changed (version " + found_version + " to " +
        expected_version + ": the file was written by " + (older ? "an older" : "a newer") + " planb)");
  }
  if (found_layout != expected_layout) {
    add(std::string("the ") + kind + "'s options changed (the file's " +
        (found_layout.empty() ? "none" : AsOptions(found_layout)) + ", the config's " +
        (expected_layout.empty() ? "none" : AsOptions(expected_layout)) + ")");
    *config_changed = true;
  }
}

}  // namespace

ShardMeta ShardMeta::Expected(const MapPlugins& plugins) {
  ShardMeta meta;
  meta.format = kShardFormat;
  meta.map = plugins.config().name;
  meta.type = Versioned(plugins.type_descriptor());
  if (plugins.type_descriptor().lookup_key == LookupKeyKind::kNumber) {
    meta.type_layout = std::string(kKeyFormatLayout) + KeyFormatName(MapKeyFormat(plugins.config()));
  }
  if (plugins.scheme_descriptor() != nullptr) {
    meta.scheme = Versioned(*plugins.scheme_descriptor());
    meta.scheme_layout = std::string(plugins.scheme()->Layout().view());
  }
  return meta;
}

Status ShardMeta::Write(MDB_txn* txn, MDB_dbi meta) const {
  for (const Field& f : kFields) {
    MDB_val k = Bytes(f.name, std::strlen(f.name)).mdb();
    MDB_val v = Bytes(this->*f.member).mdb();
    int rc = mdb_put(txn, meta, &k, &v, 0);
    if (rc != MDB_SUCCESS) return LmdbStatus(rc, std::string("writing meta ") + f.name);
  }
  if (type_layout.empty()) return Status::Ok();
  MDB_val k = Bytes(kTypeLayout, std::strlen(kTypeLayout)).mdb();
  MDB_val v = Bytes(type_layout).mdb();
  const int rc = mdb_put(txn, meta, &k, &v, 0);
  if (rc != MDB_SUCCESS) return LmdbStatus(rc, std::string("writing meta ") + kTypeLayout);
  return Status::Ok();
}

Status ShardMeta::Read(MDB_txn* txn, MDB_dbi meta, ShardMeta* out) {
  for (const Field& f : kFields) {
    MDB_val k = Bytes(f.name, std::strlen(f.name)).mdb();
    MDB_val v;
    int rc = mdb_get(txn, meta, &k, &v);
    if (rc == MDB_NOTFOUND) return Status::Corruption(std::string("meta table has no '") + f.name + "'");
    if (rc != MDB_SUCCESS) return LmdbStatus(rc, std::string("reading meta ") + f.name);
    out->*f.member = std::string(Bytes(v).view());
  }
  MDB_val k = Bytes(kTypeLayout, std::strlen(kTypeLayout)).mdb();
  MDB_val v;
  const int rc = mdb_get(txn, meta, &k, &v);
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return LmdbStatus(rc, std::string("reading meta ") + kTypeLayout);
  out->type_layout = rc == MDB_SUCCESS ? std::string(Bytes(v).view()) : std::string();
  return Status::Ok();
}

void ShardMeta::FillLegacy(const ShardMeta& expected) {
  if (type_layout.empty() && expected.type_layout.rfind(kKeyFormatLayout, 0) == 0) {
    type_layout = std::string(kKeyFormatLayout) + "number";
  }
}

std::string ShardMeta::ConfigTerms(bool scheme_given) const {
  std::string name, version;
  SplitVersioned(type, &name, &version);
  std::string text = "type = " + name + (type_layout.empty() ? "" : ", " + AsOptions(type_layout));
  if (!scheme.empty()) {
    SplitVersioned(scheme, &name, &version);
    text += ", scheme = " + name + (scheme_given ? "" : " (the default)") +
            (scheme_layout.empty() ? "" : ", " + AsOptions(scheme_layout));
  }
  return text;
}

std::string ShardMeta::Differences(const ShardMeta& found, bool* config_changed) const {
  *config_changed = false;
  std::string text;
  if (found.map != map) {
    text = "the file is map " + found.map + "'s, not map " + map + "'s";
    *config_changed = true;
  }
  if (found.format != format) {
    text += (text.empty() ? "" : "; ") + std::string("the file's format is '") + found.format + "', this planb's '" +
            format + "'";
  }
  PluginDifference("type", found.type, type, found.type_layout, type_layout, &text, config_changed);
  PluginDifference("scheme", found.scheme, scheme, found.scheme_layout, scheme_layout, &text, config_changed);
  return text;
}

std::string ShardMeta::Describe() const {
  std::string text = "map " + map + ", type " + type + (type_layout.empty() ? "" : " (" + type_layout + ")");
  if (!scheme.empty()) text += ", scheme " + scheme + (scheme_layout.empty() ? "" : " (" + scheme_layout + ")");
  return text;
}

}  // namespace planb
