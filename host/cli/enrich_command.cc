#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "host/cli/commands.h"
#include "host/common/log_text.h"
#include "host/enrich/event_enricher.h"

namespace planb {

namespace {

Status BuildSpec(const CommandLine& cli, EnrichSpec* spec) {
  for (const std::string& text : cli.enrich_lookups) {
    EnrichLookup lookup;
    Status s = ParseLookup(text, &lookup);
    if (!s.ok()) return s;
    spec->lookups.push_back(std::move(lookup));
  }
  Status s = CheckTargets(spec->lookups);
  for (size_t i = 0; s.ok() && i < cli.fallbacks.size(); ++i) s = ParseFallback(cli.fallbacks[i], &spec->lookups);
  if (s.ok() && cli.on_miss) s = ParseOnMiss(*cli.on_miss, &spec->on_miss);
  if (s.ok() && cli.input) s = ParseEventFormat("--input", *cli.input, &spec->input);
  spec->output = spec->input;
  if (s.ok() && cli.output) s = ParseEventFormat("--output", *cli.output, &spec->output);
  if (s.ok() && spec->input == EventFormat::kJson && spec->output == EventFormat::kCsv) {
    s = Status::Invalid("--output csv needs --input csv: JSON events have no fixed columns to write");
  }
  spec->strict = cli.strict;
  if (s.ok() && cli.time_unit) {
    if (!ParseTimeUnit(*cli.time_unit, &spec->time_unit)) {
      s = Status::Invalid("--time-unit: '" + LogValue(*cli.time_unit) + "' is not s, ms, us or ns");
    } else if (std::none_of(spec->lookups.begin(), spec->lookups.end(),
                            [](const EnrichLookup& l) { return l.time_field.has_value(); })) {
      s = Status::Invalid("--time-unit applies only to lookups with @TIMEFIELD (it is the unit of those fields' "
                          "numbers)");
    }
  }
  return s;
}

// Each lookup's map, described; a map the config lacks, or a @TIMEFIELD on a map without time, is refused.
Status DescribeMaps(Reader& reader, const EnrichSpec& spec, std::vector<MapInfo>* infos) {
  for (const EnrichLookup& lookup : spec.lookups) {
    MapInfo info;
    Status s = reader.Describe(lookup.map, &info);
    if (!s.ok()) return Status::Invalid("--lookup " + lookup.target.text + "=" + lookup.map + ":...: " + s.message());
    if (lookup.time_field && !info.uses_time) {
      return Status::Invalid("--lookup " + lookup.target.text + ": @" + lookup.time_field->text +
                             " does not apply to map " + lookup.map + " (type " + info.type + " has no time)");
    }
    infos->push_back(std::move(info));
  }
  return Status::Ok();
}

}  // namespace

int RunEnrichCommand(const CommandLine& cli, std::ostream& out, std::ostream& err) {
  EnrichSpec spec;
  Status s = BuildSpec(cli, &spec);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  ReaderOptions options;
  options.config_path = cli.config;
  options.home = cli.home;
  options.plugin_dirs = cli.plugin_dirs;
  std::unique_ptr<Reader> reader;
  s = Reader::Open(options, &reader);
  std::vector<MapInfo> infos;
  if (s.ok()) s = DescribeMaps(*reader, spec, &infos);
  for (size_t i = 0; s.ok() && i < spec.lookups.size(); ++i) {
    // Opens each map now (fetching its snapshot on a reader), so that a broken one, or one with no data on this
    // node, stops the run before any event is read: otherwise every event would be tagged a miss.
    s = reader->Prepare(spec.lookups[i].map);
  }
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  EventEnricher enricher(reader.get(), spec, std::move(infos), err);
  // A progress line when a person watches stderr and the events go elsewhere (not into the same terminal).
  const bool progress = ::isatty(STDERR_FILENO) != 0 && ::isatty(STDOUT_FILENO) == 0;
  auto last = std::chrono::steady_clock::now();
  if (progress) {
    enricher.set_progress([&err, &last](uint64_t events) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(250)) return;
      last = now;
      err << "\r\033[Kplanb enrich: " << events << " events" << std::flush;
    });
  }
  std::vector<std::string> files = cli.args;
  if (files.empty()) files.push_back("-");
  for (const std::string& file : files) {
    const bool standard_input = file == "-";
    const int fd = standard_input ? STDIN_FILENO : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      s = Status::IOError(LogValue(file) + ": cannot open: " + std::strerror(errno));
      break;
    }
    const std::string name = standard_input ? "stdin" : file;
    FdByteSource input(fd);
    s = enricher.Run(input, name, out);
    if (!standard_input) ::close(fd);
    if (!s.ok()) break;
  }
  out.flush();
  if (progress) err << "\r\033[K";  // clear the progress line
  err << SummaryText(spec, enricher.counts());
  if (!s.ok()) {
    err << "planb enrich: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace planb
