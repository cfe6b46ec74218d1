// IP -> country through planb::Reader beside libmaxminddb, the peer a user with IP data would pick, on the same
// ranges in one run (issue 41; the speed goal is the performance issue's). The ranges are Tor's IPv4 geoip file
// (../shared/data/tor-geoip-ipv4.csv.gz: 385,602 ranges; the bench is skipped without it), loaded into a ranged
// map with key_format = ipv4 through the real ingest path, and written as an .mmdb by MaxMind's own writer
// (libmaxmind-db-writer-perl, bench/support/make_range_mmdb.pl) with the record {"country_code": CC}.
// Both sides start from the address as text and end with the country code in hand:
//   raw_libmaxminddb    MMDB_lookup_string + MMDB_get_value(entry, "country_code") (the group's baseline: "x raw"
//                       is Plan B's time over libmaxminddb's)
//   reader_lookup       Reader::Lookup("geo", address) per address, answered from the map's read index
//                       (host/reader/range_answer_index.h; the bench checks one is held and current)
//   reader_lookup_many  Reader::LookupMany in batches of 256
//   reader_lookup_store_type  Reader::Lookup through a second Reader on the same home whose config sets
//                       read_index_max_size = 0: every lookup calls the ranged store type's Get (two LMDB
//                       tree walks), what reader_lookup cost before the read index
// on two address sets: 10,000 uniform random IPv4 addresses, and the Apache log's client addresses
// (../shared/data/apache_logs.gz, 10,000 lines) in log order. Before timing, every address of both sets is
// looked up both ways and the answers must agree (found or not, and the country): otherwise the bench exits.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <maxminddb.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "planb/reader.h"
#include "support/bench_data.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

constexpr size_t kBatch = 256;

struct Fixture {
  std::unique_ptr<Reader> reader;
  std::unique_ptr<Reader> store_reader;  // no read index
  MMDB_s mmdb{};
  std::vector<std::string> uniform;
  std::vector<std::string> apache;
  size_t uniform_found = 0;
  size_t apache_found = 0;
};

Fixture* fixture = nullptr;

std::string Dotted(uint32_t v) {
  const uint32_t n = htonl(v);
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &n, text, sizeof text);
  return text;
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "maxmind_peer_bench: %s\n", what.c_str());
  std::exit(1);
}

// libmaxminddb's answer for `address`: found, and the country code.
bool MmdbCountry(const std::string& address, std::string_view* country) {
  int gai_error = 0, mmdb_error = 0;
  MMDB_lookup_result_s result = MMDB_lookup_string(&fixture->mmdb, address.c_str(), &gai_error, &mmdb_error);
  if (gai_error != 0 || mmdb_error != MMDB_SUCCESS || !result.found_entry) return false;
  MMDB_entry_data_s data;
  if (MMDB_get_value(&result.entry, &data, "country_code", nullptr) != MMDB_SUCCESS || !data.has_data) return false;
  *country = std::string_view(data.utf8_string, data.data_size);
  return true;
}

// Every address answers alike both ways; returns how many were found.
size_t CheckSameAnswers(const std::vector<std::string>& addresses, const char* set) {
  size_t found = 0;
  for (const std::string& a : addresses) {
    std::string_view theirs;
    const bool they_found = MmdbCountry(a, &theirs);
    for (Reader* reader : {fixture->reader.get(), fixture->store_reader.get()}) {
      const LookupResult ours = reader->Lookup("geo", a);
      if (ours.found() != they_found || (they_found && ours.value.view() != theirs)) {
        Fail(std::string(set) + ": " + a + ": Plan B answers " +
             (ours.found() ? std::string(ours.value.view()) : "nothing") + ", libmaxminddb " +
             (they_found ? std::string(theirs) : "nothing") +
             (reader == fixture->store_reader.get() ? " (without the read index)" : ""));
      }
    }
    found += they_found;
  }
  return found;
}

bool Build(const std::string& root) {
  std::string why_missing;
  const std::vector<CountryRange> geoip = TorGeoIpIpv4(&why_missing);
  if (geoip.empty()) return false;
  const std::string ranges_path = root + "/ranges.txt";
  {
    std::ofstream ranges(ranges_path);
    std::unique_ptr<Runtime> runtime =
        OpenBenchRuntime(root, "[map.geo]\ntype = ranged\nkey_format = ipv4\nmax_store_size = 1GiB\n");
    LoadStream(runtime.get(), "bench", [&](StreamWriter* writer) {
      std::string from, to;
      for (const CountryRange& r : geoip) {
        from = std::to_string(r.from);
        to = std::to_string(r.to);
        Record range;
        range.has_range = range.has_value = true;
        range.range_from = Bytes(from);
        range.range_to = Bytes(to);
        range.value = Bytes(r.country);
        CheckSetup(writer->Add("geo", range));
        ranges << Dotted(static_cast<uint32_t>(r.from)) << ',' << Dotted(static_cast<uint32_t>(r.to)) << ','
               << r.country << '\n';
      }
    });
  }
  const std::string mmdb_path = root + "/geo.mmdb";
  const std::string command = "perl '" + std::string(PLANB_BENCH_SOURCE_DIR) + "/support/make_range_mmdb.pl' '" +
                              mmdb_path + "' < '" + ranges_path + "'";
  std::fprintf(stderr, "writing the .mmdb with MaxMind's writer...\n");
  if (std::system(command.c_str()) != 0) Fail("make_range_mmdb.pl failed (is libmaxmind-db-writer-perl installed?)");
  if (MMDB_open(mmdb_path.c_str(), MMDB_MODE_MMAP, &fixture->mmdb) != MMDB_SUCCESS) Fail("cannot open " + mmdb_path);

  ReaderOptions options;
  options.config_path = root + "/planb.ini";
  CheckSetup(Reader::Open(options, &fixture->reader));
  const auto started = std::chrono::steady_clock::now();
  CheckSetup(fixture->reader->Prepare("geo"));  // opens the shard and builds its read index
  const double prepare_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  for (const MapStats& map : fixture->reader->Stats().maps) {
    if (!map.read_index_current) Fail("map geo has no current read index: " + map.read_index_error);
    std::fprintf(stderr, "read index of geo: %llu bytes; Prepare (open + build) took %.0f ms\n",
                 static_cast<unsigned long long>(map.read_index_bytes), prepare_ms);
  }
  std::ofstream(root + "/plain.ini") << "home = " << root << "/home\n"
                                      << "[map.geo]\ntype = ranged\nkey_format = ipv4\nmax_store_size = 1GiB\n"
                                      << "read_index_max_size = 0\n";
  options.config_path = root + "/plain.ini";
  CheckSetup(Reader::Open(options, &fixture->store_reader));
  CheckSetup(fixture->store_reader->Prepare("geo"));

  std::mt19937 random(42);
  for (int i = 0; i < 10000; ++i) fixture->uniform.push_back(Dotted(static_cast<uint32_t>(random())));
  std::vector<std::string> log;
  if (ReadGzipLines(SharedDataPath("apache_logs.gz"), &log)) {
    for (const std::string& line : log) {
      const size_t space = line.find(' ');
      in_addr parsed;
      if (space == std::string::npos) continue;
      const std::string ip = line.substr(0, space);
      if (inet_pton(AF_INET, ip.c_str(), &parsed) == 1) fixture->apache.push_back(ip);  // IPv4 only: an ipv4 map
    }
  }
  fixture->uniform_found = CheckSameAnswers(fixture->uniform, "uniform");
  fixture->apache_found = CheckSameAnswers(fixture->apache, "apache log");
  return true;
}

const std::vector<std::string>& Addresses(bool apache) { return apache ? fixture->apache : fixture->uniform; }
size_t Expected(bool apache) { return apache ? fixture->apache_found : fixture->uniform_found; }

void Finish(benchmark::State& state, size_t found, bool apache) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Addresses(apache).size()));
  if (found == Expected(apache) * static_cast<size_t>(state.iterations())) return;
  state.SkipWithError(("found " + std::to_string(found) + " answers, expected " +
                       std::to_string(Expected(apache) * static_cast<size_t>(state.iterations())))
                          .c_str());
}

void RawLibmaxminddb(benchmark::State& state, bool apache) {
  const std::vector<std::string>& addresses = Addresses(apache);
  size_t found = 0;
  for (auto _ : state) {
    for (const std::string& a : addresses) {
      std::string_view country;
      found += MmdbCountry(a, &country);
      benchmark::DoNotOptimize(country);
    }
  }
  Finish(state, found, apache);
}

void ReaderLookupOn(benchmark::State& state, bool apache, Reader& reader) {
  const std::vector<std::string>& addresses = Addresses(apache);
  size_t found = 0;
  for (auto _ : state) {
    for (const std::string& a : addresses) {
      const LookupResult r = reader.Lookup("geo", a);
      found += r.found();
      benchmark::DoNotOptimize(r.value);
    }
  }
  Finish(state, found, apache);
}

void ReaderLookup(benchmark::State& state, bool apache) { ReaderLookupOn(state, apache, *fixture->reader); }
void ReaderLookupStoreType(benchmark::State& state, bool apache) {
  ReaderLookupOn(state, apache, *fixture->store_reader);
}

void ReaderLookupMany(benchmark::State& state, bool apache) {
  const std::vector<std::string>& addresses = Addresses(apache);
  Reader& reader = *fixture->reader;
  std::vector<ReaderKey> keys(kBatch);
  std::vector<LookupResult> results(kBatch);
  size_t found = 0;
  for (auto _ : state) {
    for (size_t start = 0; start < addresses.size(); start += kBatch) {
      const size_t n = std::min(kBatch, addresses.size() - start);
      for (size_t i = 0; i < n; ++i) keys[i].key = addresses[start + i];
      (void)reader.LookupMany("geo", keys.data(), n, results.data());
      for (size_t i = 0; i < n; ++i) found += results[i].found();
      benchmark::DoNotOptimize(results.data());
    }
  }
  Finish(state, found, apache);
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  Fixture f;
  fixture = &f;
  const std::string root = MakeBenchRoot("maxmind-peer");
  if (!Build(root)) {
    std::printf("maxmind_peer_bench: skipped: %s not found\n", SharedDataPath("tor-geoip-ipv4.csv.gz").c_str());
    return 0;
  }
  std::printf("maxmind_peer_bench: %zu uniform addresses (%zu in a range), %zu Apache log addresses (%zu); answers "
              "checked equal to libmaxminddb's on every one\n",
              f.uniform.size(), f.uniform_found, f.apache.size(), f.apache_found);
  for (bool apache : {false, true}) {
    const std::string group = apache ? "ip_to_country_apache_log_order" : "ip_to_country_uniform";
    if (apache && f.apache.empty()) {
      NoteSkipped(group + "/reader_lookup", "apache_logs.gz not found");
      continue;
    }
    benchmark::RegisterBenchmark((group + "/raw_libmaxminddb").c_str(), RawLibmaxminddb, apache);
    benchmark::RegisterBenchmark((group + "/reader_lookup").c_str(), ReaderLookup, apache);
    benchmark::RegisterBenchmark((group + "/reader_lookup_many").c_str(), ReaderLookupMany, apache);
    benchmark::RegisterBenchmark((group + "/reader_lookup_store_type").c_str(), ReaderLookupStoreType, apache);
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  MMDB_close(&f.mmdb);
  return 0;
}
