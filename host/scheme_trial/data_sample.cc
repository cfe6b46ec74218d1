#include "host/scheme_trial/data_sample.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <unordered_set>

#include "host/common/log_text.h"
#include "host/xml/reference_reader.h"

namespace planb {
namespace {

// As `planb load` dates records without <time>: the file's modification time.
Status ModificationTimeMs(const std::string& file, int64_t* ms) {
  struct stat info;
  if (::stat(file.c_str(), &info) != 0) return Status::Invalid(LogValue(file) + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return Status::Invalid(LogValue(file) + ": not a regular file");
  *ms = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1000000;
  return Status::Ok();
}

std::string Names(const std::set<std::string>& maps) {
  std::string names;
  for (const std::string& m : maps) names += (names.empty() ? "" : ", ") + m;
  return names;
}

// Keeps the first probe of each key, then shuffles: lookups in key order would flatter every scheme's cache.
void Finish(std::mt19937_64& random, std::vector<LookupProbe>* probes) {
  std::unordered_set<std::string> seen;
  std::vector<LookupProbe> distinct;
  for (LookupProbe& p : *probes) {
    if (seen.insert(p.key).second) distinct.push_back(std::move(p));
  }
  std::shuffle(distinct.begin(), distinct.end(), random);
  *probes = std::move(distinct);
}

}  // namespace

Status SampleData(const std::vector<std::string>& files, const std::set<std::string>& maps, size_t lookups,
                  const std::atomic<bool>* stop, std::map<std::string, MapSample>* out) {
  std::mt19937_64 random(20240613);  // fixed: the same files give the same sample, run after run
  std::map<std::string, MapSample> samples;
  for (const std::string& file : files) {
    int64_t effective_time = 0;
    PLANB_RETURN_IF_ERROR(ModificationTimeMs(file, &effective_time));
    uint64_t usable = 0;
    Status s = ReadReferenceDataFile(file, effective_time, [&](const ParsedRecord& parsed) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return Status::Internal("interrupted");
      const std::string map(parsed.map);
      if (maps.count(map) == 0 || !parsed.record.has_key || parsed.record.key.view().empty()) return Status::Ok();
      ++usable;
      MapSample& sample = samples[map];
      if (sample.files.empty() || sample.files.back() != file) sample.files.push_back(file);
      const uint64_t seen = ++sample.records;
      LookupProbe probe{std::string(parsed.record.key.view()), parsed.record.time_ms};
      // Reservoir sampling (Algorithm R): every record has the same chance to be among the `lookups` kept.
      if (sample.hits.size() < lookups) {
        sample.hits.push_back(std::move(probe));
      } else {
        const uint64_t slot = std::uniform_int_distribution<uint64_t>(0, seen - 1)(random);
        if (slot < lookups) sample.hits[slot] = std::move(probe);
      }
      return Status::Ok();
    });
    if (s.code() == Code::kInternal) return s;
    if (!s.ok()) return Status::Invalid(s.message());
    if (usable == 0) {
      return Status::Invalid(LogValue(file) + ": no usable rows: no record with a key of the map(s) benched (" +
                             Names(maps) + ")");
    }
  }
  for (const std::string& map : maps) {
    auto found = samples.find(map);
    if (found == samples.end()) continue;
    MapSample& sample = found->second;
    Finish(random, &sample.hits);
    for (const LookupProbe& hit : sample.hits) {
      LookupProbe miss = hit;
      miss.key.back() = static_cast<char>(miss.key.back() ^ 0x5A);
      sample.misses.push_back(std::move(miss));
    }
  }
  *out = std::move(samples);
  return Status::Ok();
}

}  // namespace planb
