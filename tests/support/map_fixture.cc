#include "support/map_fixture.h"

#include <atomic>
#include <cstdio>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/storage/map_reader.h"
#include "host/storage/own_fields.h"
#include "host/transfer/batch_zip.h"
#include "host/xml/xml_escape.h"
#include "support/test_env.h"

namespace planb::testing {

Status LoadBuiltInPlugins(PluginRegistry* registry) {
  return registry->LoadDirectories({PluginRegistry::DefaultDirectory()});
}

MapConfig MakeMapConfig(const std::string& name, const std::string& type, const std::string& scheme,
                        std::vector<std::pair<std::string, std::string>> options) {
  MapConfig config;
  config.name = name;
  config.type = type;
  config.scheme = scheme;
  config.max_store_size = uint64_t{1} << 30;
  config.plugin_options = std::move(options);
  return config;
}

Status CreateMapPlugins(const MapConfig& config, std::shared_ptr<const MapPlugins>* out) {
  PluginRegistry registry;
  PLANB_RETURN_IF_ERROR(LoadBuiltInPlugins(&registry));
  std::unique_ptr<MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(MapPlugins::Create(config, registry, &plugins));
  *out = std::move(plugins);  // keeps its own references to the libraries
  return Status::Ok();
}

SchemeInstance::~SchemeInstance() {
  if (scheme_ != nullptr) plugin_.descriptor->destroy_scheme(scheme_);
}

Status SchemeInstance::Create(const std::string& name, uint32_t key_suffix_size,
                              const std::vector<std::pair<std::string, std::string>>& options,
                              const std::string& map_name) {
  PluginRegistry registry;
  PLANB_RETURN_IF_ERROR(LoadBuiltInPlugins(&registry));
  const LoadedPlugin* plugin = nullptr;
  PLANB_RETURN_IF_ERROR(registry.Get(PluginKind::kKeyScheme, name, &plugin));
  plugin_ = *plugin;
  std::vector<PluginOption> args_options;
  for (const auto& [key, value] : options) args_options.push_back(PluginOption{key.c_str(), value.c_str()});
  PluginArgs args;
  args.map_name = map_name.c_str();
  args.options = args_options.data();
  args.option_count = static_cast<uint32_t>(args_options.size());
  args.key_suffix_size = key_suffix_size;
  ErrorBuffer error;
  scheme_ = plugin_.descriptor->create_scheme(&args, &error);
  if (scheme_ == nullptr) return Status(Code::kInvalidArgument, error.message);
  return Status::Ok();
}

Status MapTxn::Begin(std::shared_ptr<MapEnv> env, bool write) {
  Abort();
  env_ = std::move(env);
  PLANB_RETURN_IF_ERROR(txn_.Begin(env_->env(), write ? 0 : MDB_RDONLY));
  PLANB_RETURN_IF_ERROR(cursor_.Open(txn_.get(), env_->data()));
  table_ = env_->MakeTable(txn_.get(), cursor_.get());
  return Status::Ok();
}

Status MapTxn::Commit() {
  cursor_.Close();
  table_ = Table{};
  return txn_.Commit();
}

void MapTxn::Abort() {
  cursor_.Close();
  txn_.Abort();
  table_ = Table{};
}

Status CreateMapEnv(const std::string& dir, std::shared_ptr<const MapPlugins> plugins, std::shared_ptr<MapEnv>* out) {
  return MapEnv::Open(dir, std::move(plugins), MapEnv::Mode::kCreate, MapEnv::kShardFlags, out);
}

Record StateRecord(std::string_view key, std::string_view value, ValueType type) {
  // Each record a millisecond after the one made before it: State keeps the latest effective time, so records
  // made in the order a test writes them win in that order.
  static std::atomic<int64_t> next_time_ms{1700000000000};
  Record record;
  record.time_ms = next_time_ms.fetch_add(1);
  record.kind = RecordKind::kReference;
  record.has_key = true;
  record.key = Bytes(key);
  record.has_value = true;
  record.value_type = type;
  record.value = Bytes(value);
  return record;
}

Status PutRows(const std::shared_ptr<MapEnv>& env, const std::vector<std::pair<std::string, std::string>>& rows) {
  MapTxn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env, true));
  for (const auto& [key, value] : rows) {
    ErrorBuffer error;
    Code code = env->plugins().store()->Put(txn.table(), StateRecord(key, value), &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
  }
  return txn.Commit();
}

Status MergeInto(const std::shared_ptr<MapEnv>& batch, const std::shared_ptr<MapEnv>& shard, MergeStats* stats) {
  MapTxn from;
  PLANB_RETURN_IF_ERROR(from.Begin(batch, false));
  MapTxn to;
  PLANB_RETURN_IF_ERROR(to.Begin(shard, true));
  MergeStats local;
  ErrorBuffer error;
  Code code = shard->plugins().store()->Merge(from.table(), to.table(), stats != nullptr ? stats : &local, &error);
  if (code != Code::kOk) return Status::FromPlugin(code, error);
  return to.Commit();
}

void PrintTo(const DumpedRow& row, std::ostream* os) {
  auto shorten = [](const std::string& s) {
    return s.size() <= 64 ? s : s.substr(0, 64) + "...(" + std::to_string(s.size()) + " bytes)";
  };
  *os << "{key '" << shorten(row.key) << "', type " << static_cast<int>(row.type) << ", value '" << shorten(row.value)
      << "', lmdb key of " << row.lmdb_key.size() << " bytes}";
}

Status DumpShardDir(const MapCatalog& catalog, const std::string& map, const std::string& dir,
                    std::vector<DumpedRow>* out) {
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(catalog.Get(map, &plugins));
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &env));
  return DumpMap(*env, out);
}

Status DumpMap(const MapEnv& env, std::vector<DumpedRow>* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), cursor.get());  // with the plugins' own tables
  Cursor walk;
  PLANB_RETURN_IF_ERROR(walk.Open(txn.get(), env.data()));
  Bytes key;
  Bytes value;
  OwnFieldValues own(env.plugins().type_descriptor());
  for (bool more = walk.Get(MDB_FIRST, &key, &value); more; more = walk.Get(MDB_NEXT, &key, &value)) {
    Row row;
    own.Attach(&row);
    ErrorBuffer error;
    Code code = env.plugins().store()->DecodeRow(table, key, value, &row, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error);
    out->push_back(
        DumpedRow{std::string(key.view()), std::string(row.key.view()), row.value_type, std::string(row.value.view())});
  }
  return Status::Ok();
}

Code GetValue(const MapEnv& env, std::string_view key, std::string* value, ValueType* type) {
  Txn txn;
  if (!txn.Begin(env.env(), MDB_RDONLY).ok()) return Code::kIOError;
  Cursor cursor;
  if (!cursor.Open(txn.get(), env.data()).ok()) return Code::kIOError;
  LookupKey lookup;
  lookup.key = Bytes(key);
  Row row;
  OwnFieldValues own(env.plugins().type_descriptor());
  own.Attach(&row);
  ErrorBuffer error;
  Code code = env.plugins().store()->Get(env.MakeTable(txn.get(), cursor.get()), lookup, &row, &error);
  if (code == Code::kOk) {
    *value = std::string(row.value.view());
    if (type != nullptr) *type = row.value_type;
  }
  return code;
}

Status OpenTestRuntime(const std::string& dir, const std::string& config_text, std::unique_ptr<Runtime>* out) {
  const std::string config = dir + "/planb.ini";
  WriteFile(config, config_text);
  RuntimeOptions options;
  options.config_path = config;
  options.home = dir + "/home";
  return Runtime::Open(options, out);
}

std::string StateMapSection(const std::string& name, const std::string& scheme, const std::string& extra) {
  return "[map." + name + "]\ntype = state\nscheme = " + scheme + "\nmax_store_size = 1GiB\n" + extra;
}


std::string ReferenceXml(const std::string& map, const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<referenceData xmlns=\"reference-data:2\">\n";
  for (const auto& [key, value] : rows) {
    xml += "<reference><map>" + map + "</map><key>" + XmlEscaped(key, /*attribute=*/false) + "</key><value>" + XmlEscaped(value, /*attribute=*/false) +
           "</value></reference>\n";
  }
  return xml + "</referenceData>\n";
}

std::string TimedReferenceXml(const std::string& map, const std::vector<std::pair<std::string, std::string>>& rows,
                              int64_t* next_time_ms) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<referenceData xmlns=\"reference-data:2\">\n";
  for (const auto& [key, value] : rows) {
    xml += "<reference><map>" + map + "</map><time>" + FormatIsoTime((*next_time_ms)++) + "</time><key>" +
           XmlEscaped(key, /*attribute=*/false) + "</key><value>" + XmlEscaped(value, /*attribute=*/false) +
           "</value></reference>\n";
  }
  return xml + "</referenceData>\n";
}

Status StageRows(Runtime& runtime, const std::string& map, const std::vector<std::pair<std::string, std::string>>& rows,
                 uint64_t* sequence) {
  static std::atomic<uint64_t> counter{0};
  const std::string stream = "test-stream-" + std::to_string(++counter);
  StreamWriter writer(runtime.catalog(), runtime.home().writer() + "/" + stream);
  for (const auto& [key, value] : rows) PLANB_RETURN_IF_ERROR(writer.Add(map, StateRecord(key, value)));
  PLANB_RETURN_IF_ERROR(writer.Finish());
  // As a load stages a batch: the stream zipped (stored, not deflated), the zip moved into staging/.
  const std::string zip = writer.dir() + ".zip";
  PLANB_RETURN_IF_ERROR(ZipBatch(writer.dir(), zip, ZipOptions{/*compress=*/false, /*batch_id=*/"test/" + stream}));
  uint64_t staged = 0;
  StagingStore staging(runtime.home());
  PLANB_RETURN_IF_ERROR(staging.Stage(zip, &staged));
  PLANB_RETURN_IF_ERROR(RemoveTree(writer.dir()));
  if (sequence != nullptr) *sequence = staged;
  return Status::Ok();
}

Code LookupShard(Runtime& runtime, const std::string& map, std::string_view key, std::string* value) {
  std::shared_ptr<MapEnv> shard;
  if (!runtime.OpenShard(map, &shard).ok()) return Code::kIOError;
  MapReader reader;
  if (!reader.Open(shard).ok()) return Code::kIOError;
  LookupKey lookup;
  lookup.key = Bytes(key);
  Row row;
  ErrorBuffer error;
  Code code = reader.Lookup(lookup, &row, &error);
  if (code == Code::kOk) *value = std::string(row.value.view());
  return code;
}

}  // namespace planb::testing
