#include <charconv>
#include <iostream>

#include "host/commands/read_commands.h"
#include "host/commands/row_formats.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/query/map_scan.h"

namespace planb {

int RunQueryCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  QueryRequest request;
  request.map = cli.args[0];
  request.where = cli.where;
  request.explain = cli.explain;
  if (!ParseOutputFormat(cli.format.value_or("table"), &request.format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of table, csv, json\n";
    return kExitError;
  }
  if (cli.limit) {
    const std::string& text = *cli.limit;
    uint64_t limit = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc() || end != text.data() + text.size() || limit == 0) {
      err << "planb: --limit: '" << text << "' is not a whole number of rows above 0\n";
      return kExitError;
    }
    request.limit = limit;
  }
  return RunQuery(runtime, request, nullptr, out, err);
}

int RunQuery(Runtime& runtime, const QueryRequest& query, ReadBudget* budget, std::ostream& out,
             std::ostream& err) {
  std::shared_ptr<const MapPlugins> plugins;
  Status s = runtime.catalog().Get(query.map, &plugins);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  const std::vector<FieldSpec> fields = MapFields(plugins->type_descriptor(), plugins->config());
  const auto field_count = static_cast<uint32_t>(fields.size());
  ScanRequest request;
  request.budget = budget;
  request.limit = query.limit.value_or(0);
  std::unique_ptr<Expression> where;
  if (query.where) {
    s = Expression::Parse(*query.where, fields.data(), field_count, &where);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    request.bounds = where->Bounds();
    request.key_prefix = where->KeyPrefix();
    request.filter = [&where](const Row& row) { return where->Matches(row); };
  }

  std::shared_ptr<MapEnv> shard;
  s = runtime.OpenForReading(query.map, StaleSnapshot::kFetchNow, &shard);
  if (!s.ok()) {  // kNoData too: a map with no data here is not an empty result
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  // The writer (and so the header) is made at the first row: a scan that fails before any row prints nothing on
  // stdout, only the error. One that fails later leaves its output unfinished (a JSON array not closed), so that
  // nothing reading it takes a part for the whole.
  std::unique_ptr<RowWriter> writer;
  auto start = [&] {
    if (writer == nullptr) writer = RowWriter::Create(query.format, fields.data(), field_count, out);
  };
  ScanStats stats;
  s = ScanMap(*shard, request, [&](const Row& row) {
    start();
    writer->Write(row);
    return true;
  }, &stats);
  if (s.ok()) {
    start();
    writer->Finish();
  } else {
    out.flush();
  }
  if (query.explain) err << stats.Describe() << "\n";
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace planb
