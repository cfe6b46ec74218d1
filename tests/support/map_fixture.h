// Test helpers for maps: the built-in plugins through the real registry, map LMDBs with an open transaction,
// decoded dumps, a Runtime on a temporary home, reference-data XML and staged batches.
// Everything here uses the real code paths (no mocks); failures come back as Status for ASSERT_TRUE(s.ok()).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/plugin_host/map_plugins.h"
#include "host/plugin_host/plugin_registry.h"
#include "host/runtime.h"
#include "host/storage/map_env.h"
#include "planb/lmdb.h"
#include "planb/store.h"

namespace planb::testing {

// Loads the plugins built with this binary (PluginRegistry::DefaultDirectory()).
Status LoadBuiltInPlugins(PluginRegistry* registry);

// A map section as the config parser would produce it; `options` are plugin options such as hash_bits.
MapConfig MakeMapConfig(const std::string& name, const std::string& type, const std::string& scheme,
                        std::vector<std::pair<std::string, std::string>> options = {});

// The map's store and scheme instantiated by the built-in plugins.
Status CreateMapPlugins(const MapConfig& config, std::shared_ptr<const MapPlugins>* out);

// A key scheme made directly by its plugin (e.g. with a key suffix no built-in type uses), destroyed by it.
class SchemeInstance {
 public:
  SchemeInstance() = default;
  ~SchemeInstance();
  SchemeInstance(const SchemeInstance&) = delete;
  SchemeInstance& operator=(const SchemeInstance&) = delete;

  Status Create(const std::string& name, uint32_t key_suffix_size,
                const std::vector<std::pair<std::string, std::string>>& options = {},
                const std::string& map_name = "m");
  const KeyScheme* get() const { return scheme_; }
  const KeyScheme* operator->() const { return scheme_; }
  const KeyScheme& operator*() const { return *scheme_; }

 private:
  LoadedPlugin plugin_;
  KeyScheme* scheme_ = nullptr;
};

// One transaction with a cursor on a map env's data table, as plugin calls expect. Aborted on destruction.
class MapTxn {
 public:
  MapTxn() = default;
  ~MapTxn() { Abort(); }
  MapTxn(const MapTxn&) = delete;
  MapTxn& operator=(const MapTxn&) = delete;

  Status Begin(std::shared_ptr<MapEnv> env, bool write);
  Status Commit();
  void Abort();
  const Table& table() const { return table_; }

 private:
  std::shared_ptr<MapEnv> env_;
  Txn txn_;
  Cursor cursor_;
  Table table_;
};

// Creates a new map LMDB in `dir` (MapEnv::Mode::kCreate).
Status CreateMapEnv(const std::string& dir, std::shared_ptr<const MapPlugins> plugins, std::shared_ptr<MapEnv>* out);

// A <reference> record (views into the arguments).
// Its effective time is a millisecond after the previous StateRecord's (State keeps the latest).
Record StateRecord(std::string_view key, std::string_view value, ValueType type = ValueType::kString);

// Put of each (key, value) into a batch table in one write transaction.
Status PutRows(const std::shared_ptr<MapEnv>& env, const std::vector<std::pair<std::string, std::string>>& rows);

// Store::Merge of everything in `batch` into `shard` in one write transaction.
Status MergeInto(const std::shared_ptr<MapEnv>& batch, const std::shared_ptr<MapEnv>& shard,
                 MergeStats* stats = nullptr);

struct DumpedRow {
  std::string lmdb_key;
  std::string key;
  ValueType type = ValueType::kString;
  std::string value;
  bool operator==(const DumpedRow& o) const {
    return lmdb_key == o.lmdb_key && key == o.key && type == o.type && value == o.value;
  }
};
void PrintTo(const DumpedRow& row, std::ostream* os);

// Every row of the env's data table in LMDB order, decoded by the map's store type.
Status DumpMap(const MapEnv& env, std::vector<DumpedRow>* out);
// The rows of the shard (or snapshot) directory `dir` of `map`, opened read-only with `catalog`'s plugins (say, a
// node's shard that another process writes no more).
Status DumpShardDir(const MapCatalog& catalog, const std::string& map, const std::string& dir,
                    std::vector<DumpedRow>* out);

// Looks `key` up through the store; kOk fills `value` (and `type` when given).
Code GetValue(const MapEnv& env, std::string_view key, std::string* value, ValueType* type = nullptr);

// Writes `config_text` to `dir`/planb.ini and opens a Runtime on it with home `dir`/home.
Status OpenTestRuntime(const std::string& dir, const std::string& config_text, std::unique_ptr<Runtime>* out);

// "[map.<name>]\ntype = state\nscheme = <scheme>\n" plus `extra` lines.
std::string StateMapSection(const std::string& name, const std::string& scheme, const std::string& extra = "");

// Reference-data XML with one <reference> per (key, value) of `map`; text is escaped.
std::string ReferenceXml(const std::string& map, const std::vector<std::pair<std::string, std::string>>& rows);
// The same with a <time> per row: *next_time_ms, then a millisecond later for each next row (State keeps the
// latest effective time, so rows win in the order given).
std::string TimedReferenceXml(const std::string& map, const std::vector<std::pair<std::string, std::string>>& rows,
                              int64_t* next_time_ms);

// Writes `rows` of `map` as one stream under the runtime's writer/, zips it and stages the zip (staging/<seq>.zip).
// Its batch id is "test/test-stream-<n>", a new n for every call in the process.
Status StageRows(Runtime& runtime, const std::string& map, const std::vector<std::pair<std::string, std::string>>& rows,
                 uint64_t* sequence = nullptr);

// Looks `key` up in `map`'s shard through a MapReader.
Code LookupShard(Runtime& runtime, const std::string& map, std::string_view key, std::string* value);

}  // namespace planb::testing
