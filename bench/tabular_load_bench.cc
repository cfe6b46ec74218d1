// Loading from CSV and JSON lines beside loading from reference-data XML: the same PLANB_BENCH_ROWS records
// (default 500000; keys "key-<i>", 24-byte values, a state map) written once as an XML file, a CSV file and a
// JSON-lines file, each read the way `planb load` reads it.
//
// Rows of group load_from_file/<rows>_rows/ (each timed as a whole, files in the page cache after the first run):
//   raw_read_lines        the baseline: the CSV file read in 64 KiB blocks and its line ends counted (memchr):
//                         what any reader of the file pays.
//   xml_parse             ReadReferenceDataFile (expat) handing each record to a handler that only counts.
//   csv_parse, jsonl_parse  ReadTabularFile of the same records (CsvReader; simdjson DOM validation + On-Demand).
//   xml_write_stream      ReadReferenceDataFile with each record added to a StreamWriter, then Finish (commit,
//   csv_write_stream      sync); likewise from CSV and JSON lines.
//   jsonl_write_stream
//   xml_write_stream_and_id  the same with each record also added to the stream's BatchFingerprint (its batch id,
//   csv_write_stream_and_id  host/ingest/batch_fingerprint.h): what a load does before zipping and staging. The
//                            difference from *_write_stream is what stable batch ids cost.
// Compare csv_* and jsonl_* with xml_* of the same run: the ratio table prints each against raw_read_lines.
//
// Measured (PLANB_BENCH_ROWS=500000, --benchmark_repetitions=3, RelWithDebInfo, 2 cores shared with other work;
// ms, mean of 3, x raw in brackets): raw 6.0; parse: xml 437 (73), csv 44 (7.4), jsonl 87 (14.6); write stream:
// xml 1520 (254), csv 919 (154), jsonl 1009 (168). CSV parses ~10x faster than XML, JSON lines ~5x.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "host/ingest/batch_fingerprint.h"
#include "host/ingest/stream_writer.h"
#include "host/ingest/tabular_reader.h"
#include "host/runtime.h"
#include "host/xml/reference_reader.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kEffectiveTime = 1700000000000;

std::string g_root;

void RemoveRoot() {
  if (g_root.empty()) return;
  std::error_code ec;
  fs::remove_all(g_root, ec);
}

struct Files {
  size_t rows = 0;
  std::string xml;
  std::string csv;
  std::string jsonl;
  TabularSpec csv_spec;
  TabularSpec jsonl_spec;
  std::unique_ptr<Runtime> runtime;
};

std::string Key(size_t i) { return "key-" + std::to_string(i); }
std::string Value(size_t i) {
  std::string v = "value-" + std::to_string(i * 7919);
  v.resize(24, 'v');
  return v;
}

void WriteFiles(Files* f) {
  std::ofstream xml(f->xml);
  std::ofstream csv(f->csv);
  std::ofstream jsonl(f->jsonl);
  xml << "<referenceData xmlns=\"reference-data:2\">\n";
  csv << "key,value\n";
  for (size_t i = 0; i < f->rows; ++i) {
    const std::string key = Key(i);
    const std::string value = Value(i);
    xml << "  <reference><map>state</map><key>" << key << "</key><value>" << value << "</value></reference>\n";
    csv << key << ',' << value << '\n';
    jsonl << "{\"key\":\"" << key << "\",\"value\":\"" << value << "\"}\n";
  }
  xml << "</referenceData>\n";
  if (!xml || !csv || !jsonl) CheckSetup(Status::IOError("writing the bench files in " + g_root));
}

void CheckCount(benchmark::State& state, uint64_t got, size_t want) {
  if (got != want) state.SkipWithError(("read " + std::to_string(got) + " records, expected " +
                                        std::to_string(want)).c_str());
}

void RawReadLines(benchmark::State& state, const Files* f) {
  std::unique_ptr<char[]> block(new char[64 * 1024]);
  for (auto _ : state) {
    std::FILE* file = std::fopen(f->csv.c_str(), "rb");
    uint64_t lines = 0;
    size_t n = 0;
    while ((n = std::fread(block.get(), 1, 64 * 1024, file)) > 0) {
      for (const char* p = block.get(); (p = static_cast<const char*>(std::memchr(p, '\n', block.get() + n - p)));
           ++p) {
        ++lines;
      }
    }
    std::fclose(file);
    CheckCount(state, lines, f->rows + 1);
  }
}

// `read(handler)` reads one file; `write` adds each record to a stream (finished and discarded) when set, and
// `id` to the stream's fingerprint too.
template <typename Read>
void Load(benchmark::State& state, Files* f, bool write, Read read, bool id = false) {
  for (auto _ : state) {
    uint64_t records = 0;
    std::unique_ptr<StreamWriter> writer;
    if (write) {
      writer = std::make_unique<StreamWriter>(f->runtime->catalog(),
                                              f->runtime->home().writer() + "/" + StreamWriter::NewStreamName());
    }
    BatchFingerprint fingerprint("load");
    const Status s = read([&](const ParsedRecord& parsed) {
      ++records;
      if (id) fingerprint.Add(parsed.map, parsed.record);
      return writer ? writer->Add(parsed.map, parsed.record) : Status::Ok();
    });
    if (id) benchmark::DoNotOptimize(fingerprint.BatchId());
    if (s.ok() && writer) CheckSetup(writer->Finish());
    if (writer) writer->Discard();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    CheckCount(state, records, f->rows);
  }
}

void Register(Files* f) {
  const std::string group = "load_from_file/" + std::to_string(f->rows) + "_rows/";
  auto xml = [f](const RecordHandler& h) { return ReadReferenceDataFile(f->xml, kEffectiveTime, h); };
  auto csv = [f](const RecordHandler& h) { return ReadTabularFile(f->csv, f->csv_spec, kEffectiveTime, h); };
  auto jsonl = [f](const RecordHandler& h) { return ReadTabularFile(f->jsonl, f->jsonl_spec, kEffectiveTime, h); };
  auto unit = [](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kMillisecond)->MinTime(0.5); };
  unit(benchmark::RegisterBenchmark((group + "raw_read_lines").c_str(), RawReadLines, f));
  for (const bool write : {false, true}) {
    const std::string what = write ? "_write_stream" : "_parse";
    unit(benchmark::RegisterBenchmark((group + "xml" + what).c_str(),
                                      [f, write, xml](benchmark::State& s) { Load(s, f, write, xml); }));
    unit(benchmark::RegisterBenchmark((group + "csv" + what).c_str(),
                                      [f, write, csv](benchmark::State& s) { Load(s, f, write, csv); }));
    unit(benchmark::RegisterBenchmark((group + "jsonl" + what).c_str(),
                                      [f, write, jsonl](benchmark::State& s) { Load(s, f, write, jsonl); }));
  }
  unit(benchmark::RegisterBenchmark((group + "xml_write_stream_and_id").c_str(),
                                    [f, xml](benchmark::State& s) { Load(s, f, true, xml, true); }));
  unit(benchmark::RegisterBenchmark((group + "csv_write_stream_and_id").c_str(),
                                    [f, csv](benchmark::State& s) { Load(s, f, true, csv, true); }));
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  Files files;
  const char* rows = std::getenv("PLANB_BENCH_ROWS");
  files.rows = rows != nullptr && *rows != '\0' ? std::strtoull(rows, nullptr, 10) : 500000;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/planb-tabular-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    return 1;
  }
  g_root = pattern;
  std::atexit(RemoveRoot);
  files.xml = g_root + "/rows.xml";
  files.csv = g_root + "/rows.csv";
  files.jsonl = g_root + "/rows.jsonl";
  for (auto [spec, format] : {std::pair{&files.csv_spec, planb::TabularFormat::kCsv},
                              {&files.jsonl_spec, planb::TabularFormat::kJsonLines}}) {
    spec->format = format;
    spec->map = "state";
    spec->key = "key";
    spec->value = "value";
  }
  WriteFiles(&files);
  files.runtime = OpenBenchRuntime(g_root, "[map.state]\ntype = state\nscheme = hashed\n");
  std::printf("tabular load bench: %zu rows (xml %ju, csv %ju, jsonl %ju bytes)\n", files.rows,
              static_cast<uintmax_t>(std::filesystem::file_size(files.xml)),
              static_cast<uintmax_t>(std::filesystem::file_size(files.csv)),
              static_cast<uintmax_t>(std::filesystem::file_size(files.jsonl)));
  std::fflush(stdout);
  Register(&files);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  files.runtime.reset();
  return 0;
}
