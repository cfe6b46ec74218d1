#include "host/ingest/batch_verifier.h"

#include "host/ingest/deletion_fields.h"

#include <sys/stat.h>

#include <memory>
#include <vector>

#include "host/common/file_util.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/transfer/delete_entry.h"

namespace planb {

namespace {

// A deletion this node could not merge is refused now: its map must be configured here and its expression must
// parse against the fields of the map's type (as this node configures it).
Status VerifyDeleteEntry(const MapCatalog& catalog, const std::string& zip_path, const std::string& map_dir,
                         const std::string& map) {
  const std::string where = zip_path + ": entry '" + map + "/" + kDeleteEntryName + "'";
  std::shared_ptr<const MapPlugins> plugins;
  Status s = catalog.Get(map, &plugins);
  if (!s.ok()) {
    return Status::Invalid(where + ": map '" + map + "' is not configured on this node (" + s.message() + ")");
  }
  DeleteEntry entry;
  s = ReadDeleteEntry(map_dir, &entry);
  if (!s.ok()) return Status(s.code(), where + ": " + s.message());
  if (entry.all) return Status::Ok();
  const PluginDescriptor& type = plugins->type_descriptor();
  s = CheckDeletionExpression(entry, type, plugins->config());
  if (!s.ok()) return Status::Invalid(where + ": " + s.message() + " (map '" + map + "' is a " + type.name + " map)");
  return Status::Ok();
}

// Checks each delete entry and leaves in `data_maps` the maps with LMDB files.
Status VerifyDeleteEntries(const MapCatalog& catalog, const std::string& zip_path, const std::string& dir,
                           const std::vector<std::string>& maps, std::vector<std::string>* data_maps) {
  for (const std::string& map : maps) {
    const std::string map_dir = dir + "/" + map;
    if (!HasDeleteEntry(map_dir)) {
      data_maps->push_back(map);
      continue;
    }
    PLANB_RETURN_IF_ERROR(VerifyDeleteEntry(catalog, zip_path, map_dir, map));
  }
  return Status::Ok();
}

}  // namespace

Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options, const MapScope& scope) {
  return VerifyBatch(runtime.catalog(), zip_path, scratch_dir, limits, options, scope);
}

Status VerifyBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options, const MapScope& scope) {
  struct stat st;
  if (::lstat(scratch_dir.c_str(), &st) == 0) {
    // Not ours: never removed. A crashed verifier's leftovers are for the caller to clear at start-up.
    return Status::Invalid(scratch_dir + ": already exists (verifying " + zip_path + ")");
  }
  std::vector<std::string> maps;
  // Scratch, removed below whatever happens: a crash loses nothing the zip cannot give again, so no fsync.
  UnzipLimits scratch_limits = limits;
  scratch_limits.sync = false;
  scratch_limits.allow_deletes = true;
  // Before anything is inflated: a zip of a few bytes may declare gigabytes of a map the client may not write.
  scratch_limits.admit_map = [&scope](const std::string& map) {
    return ScopeAllows(scope, map) ? Status::Ok() : Status::PermissionDenied("not authorised for upload on " + map);
  };
  Status s = UnzipBatch(zip_path, scratch_dir, scratch_limits, &maps);
  std::vector<std::string> data_maps;
  if (s.ok()) s = VerifyDeleteEntries(catalog, zip_path, scratch_dir, maps, &data_maps);
  if (s.ok()) s = VerifyExtractedBatch(catalog, zip_path, scratch_dir, data_maps, options);
  Status removed = RemoveTree(scratch_dir);
  if (s.ok()) return removed;
  return s;
}

}  // namespace planb
