#include "host/serve/node_state_collector.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "host/common/disk_room.h"
#include "host/common/iso_time.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/maintain/shard_figures.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_space.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(std::string name, std::string help, MetricType type = MetricType::Gauge) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

void AddSample(MetricFamily* family, double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric metric;
  metric.label = std::move(labels);
  if (family->type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family->metric.push_back(std::move(metric));
}

// The age of the oldest staged batch in seconds (0 with none): how far merges lag behind what arrived. A zip's
// mtime is when its last byte was written, just before it was renamed into staging/.
double MergeLagSeconds(const std::vector<StagedBatch>& staged) {
  int64_t oldest_ms = INT64_MAX;
  for (const StagedBatch& batch : staged) {
    struct stat st {};
    if (::lstat(batch.path.c_str(), &st) != 0) continue;  // merged meanwhile
    oldest_ms = std::min<int64_t>(oldest_ms, int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1000000);
  }
  if (oldest_ms == INT64_MAX) return 0;
  return std::max<double>(0, static_cast<double>(CurrentTimeMs() - oldest_ms) / 1000.0);
}

uint64_t OpenDescriptors() {
  uint64_t count = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count > 0 ? count - 1 : 0;  // not the one opendir holds
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

std::vector<MetricFamily> NodeStateCollector::Collect() const {
  Runtime& runtime = *sources_.runtime;
  const Home& home = runtime.home();
  std::vector<MetricFamily> families;

  std::vector<StagedBatch> staged;
  const bool staged_known = StagingStore(home).List(&staged).ok();
  MetricFamily staged_family = Family("planb_staged_batches", "Batches staged and waiting to be merged");
  if (staged_known) AddSample(&staged_family, static_cast<double>(staged.size()));
  families.push_back(std::move(staged_family));
  MetricFamily lag = Family("planb_merge_lag_seconds", "Age of the oldest staged batch (0 when none is staged)");
  if (staged_known) AddSample(&lag, MergeLagSeconds(staged));
  families.push_back(std::move(lag));

  std::vector<QuarantinedBatch> quarantined;
  MetricFamily held = Family("planb_quarantined_batches",
                             "Batches in quarantine/: each holds back later batches of its maps until released");
  if (ListQuarantine(home, &quarantined).ok()) AddSample(&held, static_cast<double>(quarantined.size()));
  families.push_back(std::move(held));

  const DiskRoom room = MeasureDiskRoom(home.root());
  MetricFamily free_bytes = Family("planb_disk_free_bytes", "Bytes free to the node on the home's filesystem");
  MetricFamily floor = Family("planb_disk_ready_floor_bytes",
                              "Free bytes below which /readyz answers not ready (ready_min_free_disk)");
  if (room.known) AddSample(&free_bytes, static_cast<double>(room.free_bytes));
  AddSample(&floor, static_cast<double>(sources_.ready_min_free_bytes));
  families.push_back(std::move(free_bytes));
  families.push_back(std::move(floor));

  MetricFamily merge_up = Family("planb_merge_thread_up", "1 while the merge thread runs");
  AddSample(&merge_up, sources_.merge_thread_running && sources_.merge_thread_running() ? 1 : 0);
  families.push_back(std::move(merge_up));

  MetricFamily bytes = Family("planb_shard_bytes", "Size of the map's shard file (data.mdb)");
  MetricFamily rows = Family("planb_shard_rows", "Rows in the map's shard");
  MetricFamily free_share = Family("planb_shard_free_ratio", "Share of the shard file that is free (0..1)");
  MetricFamily version = Family("planb_content_version",
                                "The map's content version here: how many batches its shard has merged");
  MetricFamily measured = Family("planb_shard_measure_ok", "0 when the map's shard could not be measured");
  MetricFamily behind = Family("planb_catching_up",
                               "1 while the node lacks batches a peer merged into the map (it refuses remote reads "
                               "and snapshots of it)");
  for (const auto& [map, config] : runtime.config().maps) {
    const std::vector<ClientMetric::Label> labels = {{"map", map}};
    ShardFigures figures;
    const Status measure = MeasureShardFigures(runtime, map, &figures);
    const bool no_shard = measure.code() == Code::kNotFound;  // nothing merged yet: 0 rows at version 0
    AddSample(&measured, measure.ok() || no_shard ? 1 : 0, labels);
    if (measure.ok()) {
      AddSample(&bytes, static_cast<double>(figures.space.file_bytes), labels);
      AddSample(&rows, static_cast<double>(figures.space.rows), labels);
      AddSample(&free_share, figures.space.free_share, labels);
      AddSample(&version, static_cast<double>(figures.version.batches), labels);
    } else if (no_shard) {
      AddSample(&rows, 0, labels);
      AddSample(&version, 0, labels);
    }
    AddSample(&behind, sources_.catching_up && sources_.catching_up(map) ? 1 : 0, labels);
  }
  for (MetricFamily* family : {&bytes, &rows, &free_share, &version, &measured, &behind}) {
    families.push_back(std::move(*family));
  }

  MetricFamily info = Family("planb_build_info", "1, labelled with the program's version");
  AddSample(&info, 1, {{"version", PLANB_VERSION}});
  families.push_back(std::move(info));
  MetricFamily start = Family("process_start_time_seconds", "Start time of the process since the Unix epoch");
  AddSample(&start, static_cast<double>(sources_.started_ms) / 1000.0);
  families.push_back(std::move(start));
  MetricFamily fds = Family("process_open_fds", "Open file descriptors");
  AddSample(&fds, static_cast<double>(OpenDescriptors()));
  families.push_back(std::move(fds));
  MetricFamily resident = Family("process_resident_memory_bytes", "Resident memory");
  AddSample(&resident, static_cast<double>(ResidentBytes()));
  families.push_back(std::move(resident));
  return families;
}

}  // namespace planb
