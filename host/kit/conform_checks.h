// The checks of `planb conform` (conform.h). Each fills a CheckResult (the verdict, with notes saying what
// differed) and returns a Status only for what stops the run: bad input or a failure of this machine.
#pragma once

#include <string>
#include <vector>

#include "host/kit/conform.h"
#include "host/runtime.h"
#include "host/storage/map_reader.h"

namespace planb {

struct CheckResult {
  std::string name;
  std::vector<std::string> notes;  // why it failed; empty = passed
  bool ok() const { return notes.empty(); }
  // Adds a note while there are fewer than a screenful (the first differences are the useful ones).
  void Fail(const std::string& note);
};

// merge: loads options.first (in this process), then options.second in a child planb that is killed right after
// its merge committed, so that the batch stays staged as after a crash; the rows must equal options.expect
// (header and rows as `query --format csv`). Then this process merges the staged batch again, as a node does
// after a restart: it must be skipped (content version unchanged) and leave every row as it was.
// `expected`: ReadExpectedRows of options.expect. With options.unordered the rows are compared as a set.
Status CheckMerge(Runtime& runtime, const ConformOptions& options, const std::vector<std::string>& expected,
                  const std::string& config_path, const std::string& scratch, CheckResult* result);

// The lines of the --expect CSV (header first), "\r\n" taken as "\n"; kInvalidArgument naming it when it is
// missing, empty or over 64 MiB.
Status ReadExpectedRows(const std::string& path, std::vector<std::string>* lines);

// merge_order: a second home (`config_path`'s text with another home, `reversed_config_path`) loads
// options.second and then options.first, each at the same effective time as the merge check gives it; its rows
// must be those of `shard` (merged first then second), as a set: merges must commute (docs/plugins.md), since
// storage nodes receive batches in different orders.
Status CheckMergeOrder(const MapEnv& shard, const ConformOptions& options, const std::string& reversed_config_path,
                       CheckResult* result);

// scan_ranges: for bounds drawn from the rows (exact keys present and absent, KeyStart and time ranges, empty
// ranges), ScanMap narrowed by Store::ScanRange returns exactly what a full scan filtered the same way does.
Status CheckScanRanges(const MapEnv& shard, CheckResult* result);

// decode_row: every row of the data table decodes, and again to equal fields; its key / KeyStart / instant as
// exact ScanBounds give a range holding its LMDB key; a lookup of its key (ranged: KeyStart) at its instant
// (EffectiveTime; sessions: Start) finds a row.
Status CheckDecodeRows(const MapReader& reader, CheckResult* result);

// warm_lookups: every key of the map (hits) and as many absent keys (misses), looked up once to warm up and then
// again while this process counts heap allocations (alloc_count.h): none allowed.
Status CheckWarmLookups(const MapReader& reader, CheckResult* result);

}  // namespace planb
