// Writes one stream (one input file) into local LMDB files, one per map, under writer/<stream id>/<map>/.
// Nothing here touches shards: a stream that fails is discarded whole. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "host/plugin_host/map_catalog.h"
#include "host/storage/map_env.h"
#include "planb/lmdb.h"
#include "planb/store.h"

namespace planb {

class StreamWriter {
 public:
  StreamWriter(const MapCatalog& catalog, std::string dir);
  // A new stream directory name under writer/: "<ms since epoch>-<pid>-<counter>", unique across processes.
  static std::string NewStreamName();
  // Removes streams under `writer_dir` whose writing process is gone (killed mid-load).
  static Status RemoveAbandoned(const std::string& writer_dir);
  ~StreamWriter();  // discards the stream unless Finish() succeeded

  // Adds one record to `map`'s LMDB (opened on first use). Errors name the map.
  Status Add(std::string_view map, const Record& record);
  // Commits and syncs every map's LMDB and closes them; the directory is then complete.
  Status Finish();
  // Removes everything written.
  void Discard();

  const std::string& dir() const { return dir_; }
  // Records added per map (a later record for the same key counts too).
  std::map<std::string, uint64_t> RecordCounts() const;

 private:
  struct MapBatch {
    std::shared_ptr<const MapPlugins> plugins;
    std::shared_ptr<MapEnv> env;
    Txn txn;
    Cursor cursor;
    uint64_t records = 0;
    uint64_t records_in_txn = 0;
  };
  Status Begin(MapBatch* batch);
  // The open batch of `map` (any spelling), opening it on first use.
  Status BatchFor(std::string_view map, MapBatch** out);
  // `s` said as "disk full: ..." when it is a write that met a full disk (host/common/disk_room.h), or naming the
  // map, the file and its max_store_size when it met the LMDB map size (host/storage/map_full.h).
  Status OnDisk(const MapBatch& batch, const Status& s) const;

  const MapCatalog& catalog_;
  const std::string dir_;
  std::map<std::string, MapBatch, std::less<>> batches_;
  bool finished_ = false;
};

}  // namespace planb
