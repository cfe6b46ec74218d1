// `planb load`: each input file is one stream, written to writer/ as one LMDB per map and zipped into one
// batch. Only when every file has been read without error are the batches stored, in command-line order:
// - single node (no node_list): staged here and merged by this process, as the design's single node does;
// - with a node_list: delivered to every storage node (a BatchDelivery, batch_delivery.h); a stream must be
//   stored on every node before the next one is sent, so every node stages them in the same order.
// Before anything is staged, every node that will merge is asked whether it can (load_check.h: each map known,
// its shard opening, room in its max_store_size, disk): a load that fails a check stages nothing anywhere.
// A later failure (a node dying mid-load, a merge still running out of room) leaves what was stored and merged
// as the report says, stream by stream; loading the same files again completes it: loads are idempotent.
// A single-node load succeeds only when every stream it staged merged: one failed, quarantined or held back
// behind another batch (quarantine.h) fails the load, naming the file and why.
// A map held back behind a quarantined batch on a node that will merge fails the load's checks (nothing staged),
// naming the map, the batch and how to release it, unless LoadOptions::no_wait asks only for the batches to be
// staged (`load --no-wait`).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/ingest/batch_delivery.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/mmdb_records.h"
#include "host/ingest/tabular_reader.h"
#include "host/runtime.h"
#include "host/storage/content_version.h"

namespace planb {

struct LoadOptions {
  // The effective time of records without <time>; default: each file's modification time, so that loading
  // the same unchanged file again gives the same rows.
  std::optional<int64_t> effective_time_ms;
  // Called now and then with (file, records read so far) for progress display; may be empty.
  std::function<void(const std::string&, uint64_t)> progress;
  // Called now and then during uploads with (file, storage node, bytes acknowledged, batch bytes); may be empty.
  std::function<void(const std::string&, const std::string&, uint64_t, uint64_t)> upload_progress;
  // Where the batches go with a node_list (REQUIRED then; not owned). Unused on a single node.
  BatchDelivery* delivery = nullptr;
  // When set, only records of these maps (lower-case names) are loaded; records of other maps, configured or
  // not, are skipped and counted in StreamReport::skipped (planb bench loads one map at a time).
  std::optional<std::set<std::string>> only_maps;
  // When given and it becomes true, reading stops (kInternal "interrupted") and merging stops before the next
  // batch (planb bench on SIGINT); what was staged stays staged, as after any failed load. Not owned.
  const std::atomic<bool>* stop = nullptr;
  // When set, the files are CSV or JSON lines whose rows all go to tabular->map (tabular_reader.h), not
  // reference-data XML; a file "-" is standard input (at most once; its effective time defaults to now). The
  // record kind follows the map's type (session maps: <session> records).
  std::optional<TabularSpec> tabular;
  // When set, the files are MaxMind DB files whose networks all go to mmdb->map (mmdb_records.h); PrepareMmdb
  // fills ipv4_only from the map's key_format.
  std::optional<MmdbLoadSpec> mmdb;
  // The batches' ids (batch_ids.h): by default each stream's content id, so that loading the same files again
  // merges nothing twice; given, the pipeline's own key (checked by CheckGivenBatchId; a new key loads identical
  // content as new data).
  std::optional<std::string> batch_id;
  // Replace the content of every map the files write (docs/storage-nodes.md, "Replacing a map's content"): all
  // files go into ONE stream and batch, which each node merges into a new shard exchanged with the old in one step.
  bool replace = false;
  // `load --no-wait`: the load succeeds once its batches are staged. A map held back behind a quarantined batch
  // then does not fail it (its batches wait behind that batch; LoadReport::held_back says so), a single node's
  // stream held back behind another batch is left staged, and maps with synchronise_merge are not waited for.
  bool no_wait = false;
};

struct StreamReport {
  std::string file;
  std::map<std::string, uint64_t> records;  // per map
  std::map<std::string, uint64_t> map_bytes;  // per map: the size of its LMDB file in the batch (unzipped)
  uint64_t batch_bytes = 0;                 // the zip's size
  uint64_t sequence = 0;                    // single node: its staging sequence (0: not staged)
  std::vector<NodeDelivery> deliveries;     // with a node_list: one per storage node
  uint64_t skipped = 0;                     // records of maps left out by LoadOptions::only_maps
  std::string batch_id;                     // the id its batch goes by on every node
  // Single node: its batch was merged here before (nothing staged). With a node_list: every node answered that.
  bool already_merged = false;
  // The index of an earlier stream of this load with the same batch id (the same file given twice): not sent.
  std::optional<size_t> same_as;
};

struct LoadReport {
  std::vector<StreamReport> streams;
  bool staged = false;  // true once any stream is staged on any node: a later failure leaves it queued, not lost
  bool distributed = false;  // the streams went to the node list (else: single node, merged here)
  MergeReport merge;         // single node: what this process merged
  // Per map, the content version count its shard reaches once this load's batches are merged (on every node):
  // single node, read from the shard after the merge; with a node_list, the count the nodes reported before the
  // load plus this load's batches of the map (other loads merged meanwhile only make the real count higher).
  // Empty when the load failed before its checks passed.
  std::map<std::string, uint64_t> versions;
  // With a node_list: per storage node, per map, the content version count it reported before the load plus the
  // batches of this load it staged (not those it had merged already). Nodes that differ have missed batches.
  std::map<std::string, std::map<std::string, uint64_t>> node_versions;
  // With no_wait: the maps held back behind a quarantined batch ("NODE: message", one per map and node, from the
  // checks) and, single node, the streams left staged behind another batch ("FILE (batch N): why").
  std::vector<std::string> held_back;
  // Wall time spent reading the files and writing the streams' LMDB files, and (single node) merging them.
  std::chrono::nanoseconds write_time{0};
  std::chrono::nanoseconds merge_time{0};

  // Whether stream `i` is merged (single node; with a node_list see its deliveries): by this load, before it
  // (already merged), or as the earlier stream it repeats.
  bool Merged(size_t i) const {
    if (streams[i].same_as) return Merged(*streams[i].same_as);
    if (streams[i].already_merged) return true;
    return streams[i].sequence != 0 && merge.merged.count(streams[i].sequence) > 0;
  }
  // The maps whose content version differs between storage nodes after this load (node_versions).
  std::vector<std::string> DivergentMaps() const;
};

Status RunLoad(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& options,
               LoadReport* report);

}  // namespace planb
