#include "host/kit/conform.h"

#include <cctype>
#include <filesystem>
#include <memory>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/config/config.h"
#include "host/kit/conform_checks.h"
#include "host/runtime.h"
#include "host/scheme_trial/scratch_dir.h"

namespace planb {
namespace {

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

void Report(int number, const CheckResult& check, std::ostream& out, ConformSummary* summary) {
  ++summary->checks;
  if (check.ok()) {
    out << "ok " << number << " - " << check.name << "\n";
    return;
  }
  ++summary->failed;
  out << "not ok " << number << " - " << check.name << "\n";
  for (const std::string& note : check.notes) out << "# " << note << "\n";
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
  ScratchDir scratch;
  PLANB_RETURN_IF_ERROR(scratch.Create(options.scratch_parent));
  std::string text;
  PLANB_RETURN_IF_ERROR(ConfigText(options, scratch.path() + "/home", &text));
  const std::string config = scratch.path() + "/planb.ini";
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(config, text));
  RuntimeOptions runtime_options;
  runtime_options.config_path = config;
  std::unique_ptr<Runtime> runtime;
  Status s = Runtime::Open(runtime_options, &runtime);
  if (!s.ok()) return Status::Invalid("--type, --scheme, --option: " + s.message());

  out << "TAP version 14\n1..5\n";
  CheckResult merge{"merge", {}};
  PLANB_RETURN_IF_ERROR(CheckMerge(*runtime, options, config, scratch.path(), &merge));
  Report(1, merge, out, summary);

  std::shared_ptr<MapEnv> shard;
  s = runtime->OpenShard(options.map, &shard);
  if (!s.ok() && s.code() != Code::kNotFound) return s;
  CheckResult scan{"scan_ranges", {}};
  CheckResult decode{"decode_row", {}};
  CheckResult warm{"warm_lookups", {}};
  if (shard == nullptr) {
    for (CheckResult* c : {&scan, &decode, &warm}) c->Fail("no shard: nothing was merged (see the merge check)");
  } else {
    PLANB_RETURN_IF_ERROR(CheckScanRanges(*shard, &scan));
    MapReader reader;
    PLANB_RETURN_IF_ERROR(reader.Open(shard));
    PLANB_RETURN_IF_ERROR(CheckDecodeRows(reader, &decode));
    PLANB_RETURN_IF_ERROR(CheckWarmLookups(reader, &warm));
  }
  Report(2, scan, out, summary);
  Report(3, decode, out, summary);
  Report(4, warm, out, summary);
  // Last: it opens a second home beside the first.
  CheckResult order{"merge_order", {}};
  if (shard == nullptr) {
    order.Fail("no shard: nothing was merged (see the merge check)");
  } else {
    std::string reversed_text;
    PLANB_RETURN_IF_ERROR(ConfigText(options, scratch.path() + "/home-reversed", &reversed_text));
    const std::string reversed_config = scratch.path() + "/planb-reversed.ini";
    PLANB_RETURN_IF_ERROR(WriteFileAtomically(reversed_config, reversed_text));
    PLANB_RETURN_IF_ERROR(CheckMergeOrder(*shard, options, reversed_config, &order));
  }
  Report(5, order, out, summary);
  out << "# " << (summary->checks - summary->failed) << " of " << summary->checks << " checks passed\n";
  return Status::Ok();
}

}  // namespace planb
