#include "host/kit/conform.h"

#include <cctype>
#include <filesystem>
#include <functional>
#include <memory>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/config/config.h"
#include "host/kit/conform_checks.h"
#include "host/kit/conform_child.h"
#include "host/runtime.h"
#include "host/scheme_trial/scratch_dir.h"

namespace planb {
namespace {

constexpr size_t kNoteLineCap = 4096;  // a note's line is shown whole up to this (a plugin message is 1 KiB at most)

bool IsWord(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

bool IsPlainValue(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

// The scratch home's config: one map of the type, scheme and options given, the plugin directories given.
Status ConfigText(const ConformOptions& options, const std::string& home, std::string* text) {
  *text = "home = " + home + "\n";
  for (const std::string& dir : options.plugin_dirs) {
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(dir, ec).string();
    if (ec || !IsPlainValue(absolute)) return Status::Invalid("--plugin-dir " + LogValue(dir) + ": not a usable path");
    if (!std::filesystem::is_directory(absolute, ec)) {
      return Status::Invalid("--plugin-dir " + LogValue(dir) + ": not a directory");
    }
    *text += "plugin_dir = " + absolute + "\n";
  }
  *text += "[map." + options.map + "]\n";
  *text += "type = " + options.type + "\n";
  if (!options.scheme.empty()) *text += "scheme = " + options.scheme + "\n";
  for (const auto& [name, value] : options.options) *text += name + " = " + value + "\n";
  return Status::Ok();
}

// `line` with control characters as \xNN (a "# " line cannot be broken or its terminal driven), shown whole up to
// kNoteLineCap. Backslashes stay as they are: the host's messages come escaped already (LogValue).
std::string ControlsEscaped(std::string_view line) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : line.substr(0, kNoteLineCap)) {
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (line.size() > kNoteLineCap) out += "...(" + std::to_string(line.size()) + " bytes)";
  return out;
}

// One TAP line, and a failed check's notes under it as "# " lines: a note of several lines (a plugin's message
// as it wrote it) gives one "# " line each.
void Report(int number, const CheckResult& check, std::ostream& out, ConformSummary* summary) {
  ++summary->checks;
  if (check.ok()) {
    out << "ok " << number << " - " << check.name << "\n";
    return;
  }
  ++summary->failed;
  out << "not ok " << number << " - " << check.name << "\n";
  for (const std::string& note : check.notes) {
    size_t start = 0;
    do {
      size_t end = note.find('\n', start);
      if (end == std::string::npos) end = note.size();
      out << "# " << ControlsEscaped(std::string_view(note).substr(start, end - start)) << "\n";
      start = end + 1;
    } while (start < note.size());
  }
}

Status OpenRuntime(const std::string& config, std::unique_ptr<Runtime>* runtime) {
  RuntimeOptions runtime_options;
  runtime_options.config_path = config;
  return Runtime::Open(runtime_options, runtime);
}

}  // namespace

Status ParseOptionArgument(const std::string& text, std::pair<std::string, std::string>* out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) return Status::Invalid("--option " + LogValue(text) + ": not NAME=VALUE");
  std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return Status::Invalid("--option " + LogValue(text) + ": the name may hold only letters, digits and '_'");
    }
  }
  if (name.empty()) return Status::Invalid("--option " + LogValue(text) + ": an empty name");
  if (!IsPlainValue(value)) return Status::Invalid("--option " + LogValue(text) + ": a control character in the value");
  *out = {std::move(name), std::move(value)};
  return Status::Ok();
}

Status RunConformance(const ConformOptions& options, std::ostream& out, ConformSummary* summary) {
  *summary = ConformSummary();
  if (!IsWord(options.type)) return Status::Invalid("--type " + LogValue(options.type) + ": not a plugin name");
  if (!options.scheme.empty() && !IsWord(options.scheme)) {
    return Status::Invalid("--scheme " + LogValue(options.scheme) + ": not a plugin name");
  }
  if (!IsValidMapName(options.map)) return Status::Invalid("--map " + LogValue(options.map) + ": not a map name");
  for (const std::string* file : {&options.first, &options.second, &options.expect}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*file, ec)) return Status::Invalid(LogValue(*file) + ": not a readable file");
  }
  std::vector<std::string> expected;
  PLANB_RETURN_IF_ERROR(ReadExpectedRows(options.expect, &expected));
  ScratchDir scratch;
  PLANB_RETURN_IF_ERROR(scratch.Create(options.scratch_parent));
  const std::string dir = scratch.path();
  std::string text;
  PLANB_RETURN_IF_ERROR(ConfigText(options, dir + "/home", &text));
  const std::string config = dir + "/planb.ini";
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(config, text));
  std::string reversed_text;
  PLANB_RETURN_IF_ERROR(ConfigText(options, dir + "/home-reversed", &reversed_text));
  const std::string reversed_config = dir + "/planb-reversed.ini";
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(reversed_config, reversed_text));

  // Loading the plugins is the first thing a plugin can get wrong: in a child too, its failure bad input.
  ChildVerdict setup = RunCheckInChild("setup", dir + "/setup.log", /*stop_on_error=*/true, [&](CheckResult*) {
    std::unique_ptr<Runtime> runtime;
    const Status s = OpenRuntime(config, &runtime);
    return s.ok() ? s : Status::Invalid("--type, --scheme, --option: " + s.message());
  });
  PLANB_RETURN_IF_ERROR(setup.stop);
  if (!setup.result.ok()) {
    std::string why;
    for (const std::string& note : setup.result.notes) why += "\n  " + note;
    return Status::Invalid("loading the plugins for --type " + options.type +
                           (options.scheme.empty() ? "" : " --scheme " + options.scheme) + " failed:" + why);
  }

  out << "TAP version 14\n1..5\n";
  out.flush();
  int number = 0;
  // Each check in a child of its own; a verdict that stops the run is this machine failing, not the plugin.
  auto run = [&](const std::string& name, const std::function<Status(CheckResult*)>& check) -> Status {
    ChildVerdict verdict = RunCheckInChild(name, dir + "/" + name + ".log", /*stop_on_error=*/false, check);
    PLANB_RETURN_IF_ERROR(verdict.stop);
    Report(++number, verdict.result, out, summary);
    out.flush();
    return Status::Ok();
  };
  PLANB_RETURN_IF_ERROR(run("merge", [&](CheckResult* result) {
    std::unique_ptr<Runtime> runtime;
    PLANB_RETURN_IF_ERROR(OpenRuntime(config, &runtime));
    return CheckMerge(*runtime, options, expected, config, dir, result);
  }));
  // The checks of the merged shard; each finds no shard when nothing was merged.
  auto with_shard = [&](const std::function<Status(const std::shared_ptr<MapEnv>&, CheckResult*)>& check) {
    return [&options, &config, check](CheckResult* result) -> Status {
      std::unique_ptr<Runtime> runtime;
      PLANB_RETURN_IF_ERROR(OpenRuntime(config, &runtime));
      std::shared_ptr<MapEnv> shard;
      const Status s = runtime->OpenShard(options.map, &shard);
      if (s.code() == Code::kNotFound) {
        result->Fail("no shard: nothing was merged (see the merge check)");
        return Status::Ok();
      }
      PLANB_RETURN_IF_ERROR(s);  // the shard does not open: the plugins' message, as this check's failure
      return check(shard, result);
    };
  };
  PLANB_RETURN_IF_ERROR(run("scan_ranges", with_shard([](const std::shared_ptr<MapEnv>& shard, CheckResult* result) {
                          return CheckScanRanges(*shard, result);
                        })));
  PLANB_RETURN_IF_ERROR(run("decode_row", with_shard([](const std::shared_ptr<MapEnv>& shard, CheckResult* result) {
                          MapReader reader;
                          PLANB_RETURN_IF_ERROR(reader.Open(shard));
                          return CheckDecodeRows(reader, result);
                        })));
  PLANB_RETURN_IF_ERROR(run("warm_lookups", with_shard([](const std::shared_ptr<MapEnv>& shard, CheckResult* result) {
                          MapReader reader;
                          PLANB_RETURN_IF_ERROR(reader.Open(shard));
                          return CheckWarmLookups(reader, result);
                        })));
  PLANB_RETURN_IF_ERROR(run("merge_order", with_shard([&](const std::shared_ptr<MapEnv>& shard, CheckResult* result) {
                          return CheckMergeOrder(*shard, options, reversed_config, result);
                        })));
  out << "# " << (summary->checks - summary->failed) << " of " << summary->checks << " checks passed\n";
  return Status::Ok();
}

}  // namespace planb
