// Helpers for the end-to-end CLI tests: a temp directory holding a config, a home and input files, and the real
// planb binary run against them. Header-only, so that only *_test.cc files live in this directory.
#pragma once

#include <expat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/test_env.h"

namespace planb::testing {

// Three maps: one per key scheme, and one (employees) that tests leave empty until they need it.
inline constexpr char kCliConfig[] =
    "[map.city_to_country]\n"
    "type = state\n"
    "scheme = hashed\n"
    "[map.iptolocation]\n"
    "type = state\n"
    "scheme = direct\n"
    "[map.employees]\n"
    "type = state\n";

// A referenceData document: the root on line 1, `body` from line 2, the closing tag on the last line.
inline std::string ReferenceData(const std::string& body) {
  return "<referenceData xmlns=\"reference-data:2\">\n" + body + "\n</referenceData>\n";
}

// One <reference> element on one line.
inline std::string Ref(const std::string& map, const std::string& key, const std::string& value) {
  return "  <reference><map>" + map + "</map><key>" + key + "</key><value>" + value + "</value></reference>";
}

class CliEnv {
 public:
  explicit CliEnv(const std::string& config_text = kCliConfig) : home_(dir_ / "home"), config_(dir_ / "planb.ini") {
    WriteFile(config_, config_text);
  }

  const std::string& dir() const { return dir_.path(); }
  const std::string& home() const { return home_; }
  const std::string& config() const { return config_; }
  std::string shard_data(const std::string& map) const { return home_ + "/shards/" + map + "/data.mdb"; }

  // Writes `contents` to `name` inside the temp directory and returns its path.
  std::string Write(const std::string& name, const std::string& contents) const {
    const std::string path = dir_ / name;
    WriteFile(path, contents);
    return path;
  }

  // planb --home HOME --config CONFIG args...
  ProcessResult Run(const std::vector<std::string>& args) const {
    std::vector<std::string> all{"--home", home_, "--config", config_};
    all.insert(all.end(), args.begin(), args.end());
    return RunPlanb(all);
  }
  ProcessResult Load(const std::vector<std::string>& files) const {
    std::vector<std::string> args{"load"};
    args.insert(args.end(), files.begin(), files.end());
    return Run(args);
  }
  ProcessResult Lookup(const std::string& map, const std::string& key) const { return Run({"lookup", map, key}); }

 private:
  TempDir dir_;
  std::string home_;
  std::string config_;
};

// Every shards/<map>/data.mdb under `home`, by map name, with its bytes.
inline std::map<std::string, std::string> ShardDataFiles(const std::string& home) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(home + "/shards", ec)) {
    const std::string data = entry.path().string() + "/data.mdb";
    if (std::filesystem::exists(data)) files[entry.path().filename().string()] = ReadFile(data);
  }
  return files;
}

// The names in `dir` that are not hidden (lock files are hidden; batches and streams are not), sorted.
inline std::vector<std::string> VisibleEntries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] != '.') names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "" when `fragment` is well-formed XML content with every namespace prefix it uses declared inside it; else
// expat's complaint.
inline std::string XmlFragmentError(const std::string& fragment) {
  const std::string doc = "<wrapper>" + fragment + "</wrapper>";
  XML_Parser parser = XML_ParserCreateNS(nullptr, '\n');
  std::string error;
  if (XML_Parse(parser, doc.data(), static_cast<int>(doc.size()), XML_TRUE) == XML_STATUS_ERROR) {
    error = XML_ErrorString(XML_GetErrorCode(parser));
  }
  XML_ParserFree(parser);
  return error;
}

}  // namespace planb::testing
