#include "host/cli/cluster_versions.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/commands.h"
#include "host/cluster/cluster_delivery.h"
#include "host/common/csv.h"
#include "host/common/hex.h"
#include "host/common/log_text.h"
#include "host/storage/content_version.h"

namespace planb {
namespace {

using Json = nlohmann::ordered_json;

// "in step", or who is behind: a node with fewer batches than the most any node has, or with as many but other
// batches (the digests differ: each has merged batches the other lacks).
std::string StateOf(const std::vector<std::string>& nodes, const std::vector<const ContentVersion*>& versions) {
  uint64_t most = 0;
  for (const ContentVersion* v : versions) {
    if (v != nullptr) most = std::max(most, v->batches);
  }
  const ContentVersion* reference = nullptr;
  for (const ContentVersion* v : versions) {
    if (v != nullptr && v->batches == most) reference = v;
  }
  std::string behind;
  bool split = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ContentVersion* v = versions[i];
    if (v == nullptr) continue;
    if (v->batches < most) {
      behind += (behind.empty() ? "" : ", ") + nodes[i] + " (" + std::to_string(most - v->batches) + ")";
    } else if (reference != nullptr && v->digest != reference->digest) {
      split = true;
    }
  }
  if (!behind.empty()) return "behind: " + behind;
  if (split) return "diverged: as many batches, not the same ones";
  std::string silent;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (versions[i] == nullptr) silent += (silent.empty() ? "" : ", ") + nodes[i];
  }
  if (!silent.empty()) return "unknown: " + silent + " did not answer";
  return "in step";
}

}  // namespace

int PrintClusterVersions(Runtime& runtime, StoresFormat format, std::ostream& out, std::ostream& err) {
  const ClusterConfig& cluster = runtime.config().cluster;
  if (cluster.single_node()) {
    err << "planb: stores --cluster: the config has no node_list (a single node has no peers to compare)\n";
    return kExitError;
  }
  protocol::PrepareRequest request;
  for (const auto& [name, plugins] : runtime.catalog().maps()) request.maps.push_back({name, 0});
  ClusterDelivery delivery(runtime);
  std::vector<NodeCheck> checks;
  delivery.Check(request, &checks);

  int exit_code = kExitOk;
  // versions[map][node index]; absent: that node did not answer for the map.
  std::map<std::string, std::vector<ContentVersion>> versions;
  std::map<std::string, std::vector<bool>> answered;
  Json errors = Json::array();
  for (size_t i = 0; i < checks.size(); ++i) {
    const NodeCheck& check = checks[i];
    if (!check.status.ok()) {
      err << "planb: stores --cluster: " << check.node << ": " << LogValue(check.status.message(), 1000) << "\n";
      errors.push_back({{"node", check.node}, {"error", check.status.message()}});
      exit_code = kExitError;
      continue;
    }
    for (const protocol::PrepareMapReply& reply : check.reply.maps) {
      auto& row = versions[reply.map];
      auto& seen = answered[reply.map];
      row.resize(checks.size());
      seen.resize(checks.size(), false);
      row[i] = ContentVersion{reply.batches, reply.digest};
      seen[i] = true;
    }
  }
  std::vector<std::string> nodes;
  for (const NodeCheck& check : checks) nodes.push_back(check.node);
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header{"MAP"};
  header.insert(header.end(), nodes.begin(), nodes.end());
  header.push_back("STATE");
  table.push_back(header);
  bool divergent = false;
  Json maps = Json::array();
  for (const auto& [name, plugins] : runtime.catalog().maps()) {
    std::vector<std::string> line{name};
    std::vector<const ContentVersion*> row(nodes.size(), nullptr);
    Json by_node = Json::object();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const bool has = answered.count(name) > 0 && answered[name][i];
      line.push_back(has ? std::to_string(versions[name][i].batches) : "?");
      if (has) row[i] = &versions[name][i];
      by_node[nodes[i]] = has ? Json{{"batches", versions[name][i].batches},
                                     {"digest", Hex16(versions[name][i].digest)}}
                              : Json();
    }
    const std::string state = StateOf(nodes, row);
    divergent = divergent || state != "in step";
    line.push_back(state);
    table.push_back(line);
    maps.push_back({{"map", name}, {"versions", by_node}, {"state", state}});
  }
  if (exit_code == kExitOk && divergent) exit_code = kExitNotFound;
  if (format == StoresFormat::kJson) {
    const Json doc = {{"nodes", nodes}, {"maps", maps}, {"errors", errors}};
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return exit_code;
  }
  if (format == StoresFormat::kCsv) {
    std::string text;
    for (size_t l = 0; l < table.size(); ++l) {
      for (size_t i = 0; i < table[l].size(); ++i) {
        if (i > 0) text += ",";
        // The header as the other formats name things (map, state); "?" (no answer) as an empty field.
        std::string cell = table[l][i];
        if (l == 0 && (i == 0 || i + 1 == table[l].size())) cell = i == 0 ? "map" : "state";
        if (l > 0 && cell == "?") cell.clear();
        AppendCsvField(cell, &text);
      }
      text += "\n";
    }
    out << text;
    return exit_code;
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& l : table) {
    for (size_t i = 0; i < l.size(); ++i) widths[i] = std::max(widths[i], l[i].size());
  }
  for (const auto& l : table) {
    for (size_t i = 0; i < l.size(); ++i) {
      const bool last = i + 1 == l.size();
      out << (i == 0 ? "" : "  ") << (i == 0 || last ? std::left : std::right)
          << std::setw(last ? 0 : static_cast<int>(widths[i])) << l[i];
    }
    out << "\n";
  }
  return exit_code;
}

}  // namespace planb
