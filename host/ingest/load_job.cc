#include "host/ingest/load_job.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <memory>

#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/xml/reference_reader.h"

namespace planb {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kProgressEvery = 50000;

Status FileModificationTime(const std::string& file, int64_t* ms) {
  // stat's nanoseconds, not std::filesystem's clock (whose conversion to system time is inexact in C++17).
  struct stat info;
  if (::stat(file.c_str(), &info) != 0) return Status::IOError(file + ": " + std::strerror(errno));
  *ms = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1000000;
  return Status::Ok();
}

Status WriteStream(Runtime& runtime, const std::string& file, const LoadOptions& options, StreamWriter* writer,
                   StreamReport* report) {
  int64_t effective_time = 0;
  if (options.effective_time_ms) {
    effective_time = *options.effective_time_ms;
  } else {
    PLANB_RETURN_IF_ERROR(FileModificationTime(file, &effective_time));
  }
  uint64_t records = 0;
  PLANB_RETURN_IF_ERROR(ReadReferenceDataFile(file, effective_time, [&](const ParsedRecord& parsed) {
    PLANB_RETURN_IF_ERROR(writer->Add(parsed.map, parsed.record));
    if (++records % kProgressEvery == 0 && options.progress) options.progress(file, records);
    return Status::Ok();
  }));
  PLANB_RETURN_IF_ERROR(writer->Finish().WithContext(file));
  report->file = file;
  report->records = writer->RecordCounts();
  return Status::Ok();
}

Status WriteStreams(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& options,
                    std::vector<std::unique_ptr<StreamWriter>>* writers, LoadReport* report) {
  for (const std::string& file : files) {
    std::error_code ec;
    fs::file_status status = fs::status(file, ec);
    if (!fs::exists(status)) return Status::Invalid(file + ": no such file");
    if (!fs::is_regular_file(status)) return Status::Invalid(file + ": not a regular file");
    writers->push_back(
        std::make_unique<StreamWriter>(runtime.catalog(), runtime.home().writer() + "/" + StreamWriter::NewStreamName()));
    StreamReport stream;
    PLANB_RETURN_IF_ERROR(WriteStream(runtime, file, options, writers->back().get(), &stream));
    report->streams.push_back(std::move(stream));
  }
  return Status::Ok();
}

// Every shard the streams will merge into must open (an LMDB file with the configured layout) before anything
// is staged, so that a bad shard fails the load before any other shard changes.
Status CheckShards(Runtime& runtime, const LoadReport& report) {
  for (const StreamReport& stream : report.streams) {
    for (const auto& entry : stream.records) {
      std::shared_ptr<MapEnv> shard;
      Status s = runtime.OpenShard(entry.first, &shard);
      if (!s.ok() && s.code() != Code::kNotFound) return s;
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunLoad(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& options,
               LoadReport* report) {
  if (files.empty()) return Status::Invalid("load: no input files given");
  PLANB_RETURN_IF_ERROR(StreamWriter::RemoveAbandoned(runtime.home().writer()));
  std::vector<std::unique_ptr<StreamWriter>> writers;
  Status s = WriteStreams(runtime, files, options, &writers, report);
  if (s.ok()) s = CheckShards(runtime, *report);
  if (!s.ok()) {
    for (const auto& writer : writers) writer->Discard();  // finished streams too: nothing is left behind
    return s;
  }
  StagingStore staging(runtime.home());
  for (const auto& writer : writers) {
    uint64_t sequence = 0;
    PLANB_RETURN_IF_ERROR(staging.Stage(writer->dir(), &sequence));
    report->staged = true;
  }
  // Single node: this process is the storage node, so it merges what it staged (and anything queued before).
  MergeProcessor merger(runtime);
  return merger.MergePending(&report->merge);
}

}  // namespace planb
