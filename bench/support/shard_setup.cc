#include "support/shard_setup.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/transfer/batch_zip.h"

namespace planb::bench {

void CheckSetup(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.message().c_str());
    std::exit(1);
  }
}

std::unique_ptr<Runtime> OpenBenchRuntime(const std::string& dir, const std::string& map_sections) {
  std::ofstream(dir + "/planb.ini") << "home = " << dir << "/home\n" << map_sections;
  RuntimeOptions options;
  options.config_path = dir + "/planb.ini";
  std::unique_ptr<Runtime> runtime;
  CheckSetup(Runtime::Open(options, &runtime));
  return runtime;
}

void LoadStream(Runtime* runtime, const std::string& stream_name, const std::function<void(StreamWriter*)>& add) {
  StreamWriter writer(runtime->catalog(), runtime->home().writer() + "/" + stream_name);
  add(&writer);
  CheckSetup(writer.Finish());
  CheckSetup(StageAndMerge(runtime, &writer));
}

Status StageBatch(Runtime* runtime, StreamWriter* writer) {
  const std::string zip = writer->dir() + ".zip";
  PLANB_RETURN_IF_ERROR(ZipBatch(writer->dir(), zip, ZipOptions{/*compress=*/false, /*batch_id=*/"bench/" + zip}));
  writer->Discard();
  uint64_t sequence = 0;
  return StagingStore(runtime->home()).Stage(zip, &sequence);
}

Status StageAndMerge(Runtime* runtime, StreamWriter* writer) {
  PLANB_RETURN_IF_ERROR(StageBatch(runtime, writer));
  MergeReport report;
  return MergeProcessor(*runtime).MergePending(&report);
}

void OpenReader(Runtime* runtime, std::string_view map, MapReader* reader) {
  std::shared_ptr<MapEnv> env;
  CheckSetup(runtime->OpenShard(map, &env));
  CheckSetup(reader->Open(env));
}

std::string SharedDataPath(const std::string& file) {
  const char* env = std::getenv("PLANB_SHARED_DATA");
  return std::string(env != nullptr ? env : PLANB_SHARED_DATA_DIR) + "/" + file;
}

bool ReadGzipLines(const std::string& path, std::vector<std::string>* lines) {
  const std::string command = "gzip -dc '" + path + "'";
  FILE* in = ::popen(command.c_str(), "r");
  if (in == nullptr) return false;
  std::string line;
  bool any = false;
  for (int c = std::fgetc(in); c != EOF; c = std::fgetc(in)) {
    any = true;
    if (c == '\n') {
      lines->push_back(std::move(line));
      line.clear();
    } else {
      line += static_cast<char>(c);
    }
  }
  if (!line.empty()) lines->push_back(std::move(line));
  return ::pclose(in) == 0 && any;
}

void CheckFound(benchmark::State& state, size_t found, size_t errors, bool expect_hit, const char* what,
                const char* last_error) {
  const uint64_t expected = expect_hit ? static_cast<uint64_t>(state.iterations()) : 0;
  if (found == expected && errors == 0) return;
  std::string message = std::string(what) + " lookups: " + std::to_string(found) + " of " +
                        std::to_string(state.iterations()) + " found, expected " + std::to_string(expected);
  if (errors != 0) message += "; " + std::to_string(errors) + " failed, last: " + last_error;
  state.SkipWithError(message.c_str());
}

namespace {
std::vector<std::string>& BenchRoots() {
  static std::vector<std::string> roots;
  return roots;
}
void RemoveBenchRoots() {
  for (const std::string& root : BenchRoots()) {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
}
}  // namespace

std::string MakeBenchRoot(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/planb-" + name + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) CheckSetup(Status::IOError("making " + pattern));
  if (BenchRoots().empty() && std::getenv("PLANB_BENCH_KEEP") == nullptr) std::atexit(RemoveBenchRoots);
  BenchRoots().push_back(pattern);
  return pattern;
}

void LoadKeyValues(Runtime* runtime, const std::string& map,
                   const std::vector<std::pair<std::string, std::string>>& pairs) {
  LoadStream(runtime, StreamWriter::NewStreamName(), [&](StreamWriter* writer) {
    Record record;
    record.has_key = record.has_value = true;
    for (const auto& [k, v] : pairs) {
      record.key = Bytes(k);
      record.value = Bytes(v);
      CheckSetup(writer->Add(map, record));
    }
  });
}

std::unique_ptr<Runtime> LoadStateMap(const std::string& dir, const std::string& map,
                                      const std::vector<std::pair<std::string, std::string>>& data) {
  std::unique_ptr<Runtime> runtime =
      OpenBenchRuntime(dir, "[map." + map + "]\ntype = state\nscheme = hashed\n");
  LoadKeyValues(runtime.get(), map, data);
  return runtime;
}

}  // namespace planb::bench
