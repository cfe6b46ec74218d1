// `planb plugins [--format table|json]`: every loaded plugin (kind, name, version, the SDK version it was built
// against, file, summary) with its options (name, default, help), and the plugin files that did not load, why.
// The table is aligned as `docker ps` prints, each plugin's options indented under it; JSON is an object with a
// "plugins" array and a "failed" array. Plugin text is the plugin's own: escaped in the table (LogValue).
#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/cli/commands.h"
#include "host/common/log_text.h"
#include "host/plugin_host/descriptor_copy.h"

namespace planb {
namespace {

std::string Text(const char* text) { return text == nullptr ? "" : LogValue(text); }

// Prints `rows` left-aligned, two spaces apart; a row of one cell (an option line) is printed as it is.
void PrintAligned(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (row.size() < 2) continue;
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

void PrintTable(const PluginRegistry& registry, std::ostream& out) {
  // Option lines: "    NAME  default VALUE  HELP", aligned over every plugin.
  size_t name_width = 0;
  size_t default_width = 0;
  auto default_text = [](const OptionSpec& o) {
    return o.default_value == nullptr ? std::string("no default") : "default " + Text(o.default_value);
  };
  for (const LoadedPlugin& p : registry.plugins()) {
    for (uint32_t i = 0; i < p.descriptor->option_count; ++i) {
      name_width = std::max(name_width, Text(p.descriptor->options[i].name).size());
      default_width = std::max(default_width, default_text(p.descriptor->options[i]).size());
    }
  }
  std::vector<std::vector<std::string>> rows{{"KIND", "NAME", "VERSION", "SDK", "FILE", "SUMMARY"}};
  for (const LoadedPlugin& p : registry.plugins()) {
    const PluginDescriptor& d = *p.descriptor;
    rows.push_back({PluginKindName(d.kind), Text(d.name), std::to_string(d.version),
                    AbiVersionText(d.abi_major, p.abi_minor), LogValue(p.file), Text(d.summary)});
    for (uint32_t i = 0; i < d.option_count; ++i) {
      const OptionSpec& o = d.options[i];
      std::string name = Text(o.name);
      std::string value = default_text(o);
      name.resize(name_width, ' ');
      value.resize(default_width, ' ');
      rows.push_back({"    " + name + "  " + value + "  " + Text(o.help)});
    }
  }
  PrintAligned(rows, out);
  if (registry.failures().empty()) return;
  std::vector<std::vector<std::string>> failed{{"NOT LOADED", "REASON"}};
  for (const PluginFailure& f : registry.failures()) failed.push_back({LogValue(f.file), LogValue(f.reason)});
  out << "\n";
  PrintAligned(failed, out);
}

nlohmann::ordered_json NullOr(const char* text) { return text == nullptr ? nlohmann::ordered_json() : text; }

void PrintJson(const PluginRegistry& registry, std::ostream& out) {
  nlohmann::ordered_json plugins = nlohmann::ordered_json::array();
  for (const LoadedPlugin& p : registry.plugins()) {
    const PluginDescriptor& d = *p.descriptor;
    nlohmann::ordered_json options = nlohmann::ordered_json::array();
    for (uint32_t i = 0; i < d.option_count; ++i) {
      const OptionSpec& o = d.options[i];
      options.push_back({{"name", o.name}, {"default", NullOr(o.default_value)}, {"help", NullOr(o.help)}});
    }
    plugins.push_back({{"kind", PluginKindName(d.kind)},
                       {"name", d.name},
                       {"version", d.version},
                       {"sdk", AbiVersionText(d.abi_major, p.abi_minor)},
                       {"file", p.file},
                       {"summary", NullOr(d.summary)},
                       {"options", options}});
  }
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (const PluginFailure& f : registry.failures()) failed.push_back({{"file", f.file}, {"reason", f.reason}});
  const nlohmann::ordered_json doc = {{"plugins", plugins}, {"failed", failed}};
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

int RunPluginsCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string format = cli.format.value_or("table");
  if (format == "table") {
    PrintTable(runtime.registry(), out);
  } else if (format == "json") {
    PrintJson(runtime.registry(), out);
  } else {
    err << "planb: --format: '" << LogValue(format) << "' is not one of table, json\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace planb
