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

std::string ShardMeta::Describe() const {
  std::string text = "map " + map + ", type " + type + (type_layout.empty() ? "" : " (" + type_layout + ")");
  if (!scheme.empty()) text += ", scheme " + scheme + (scheme_layout.empty() ? "" : " (" + scheme_layout + ")");
  return text;
}

}  // namespace planb
