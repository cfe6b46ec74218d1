#include <charconv>
#include <iostream>

#include "host/commands/read_commands.h"
#include "host/commands/row_formats.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/query/map_scan.h"

namespace planb {

int RunQueryCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  std::shared_ptr<const MapPlugins> plugins;
  Status s = runtime.catalog().Get(cli.args[0], &plugins);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  const std::vector<FieldSpec> fields = MapFields(plugins->type_descriptor(), plugins->config());
  const auto field_count = static_cast<uint32_t>(fields.size());
  OutputFormat format;
  if (!ParseOutputFormat(cli.format.value_or("table"), &format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of table, csv, json\n";
    return kExitError;
  }
  ScanRequest request;
  if (cli.limit) {
    const std::string& text = *cli.limit;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), request.limit);
    if (ec != std::errc() || end != text.data() + text.size() || request.limit == 0) {
      err << "planb: --limit: '" << text << "' is not a whole number of rows above 0\n";
      return kExitError;
    }
  }
  std::unique_ptr<Expression> where;
  if (cli.where) {
    s = Expression::Parse(*cli.where, fields.data(), field_count, &where);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    request.bounds = where->Bounds();
    request.key_prefix = where->KeyPrefix();
    request.filter = [&where](const Row& row) { return where->Matches(row); };
  }

  std::shared_ptr<MapEnv> shard;
  s = runtime.OpenForReading(cli.args[0], StaleSnapshot::kFetchNow, &shard);
  if (!s.ok()) {  // kNoData too: a map with no data here is not an empty result
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  std::unique_ptr<RowWriter> writer = RowWriter::Create(format, fields.data(), field_count, out);
  ScanStats stats;
  s = ScanMap(*shard, request, [&writer](const Row& row) {
    writer->Write(row);
    return true;
  }, &stats);
  writer->Finish();
  if (cli.explain) err << stats.Describe() << "\n";
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace planb
