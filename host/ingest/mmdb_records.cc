#include "host/ingest/mmdb_records.h"

#include <arpa/inet.h>

#include <limits>

#include "host/ingest/mmdb_networks.h"
#include "planb/value_type.h"

namespace planb {
namespace {

// inet_ntop's text of `bytes` (4 used for IPv4).
std::string AddressText(const uint8_t* bytes, bool ipv6) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes, text, sizeof text);
  return text;
}

}  // namespace

Status ReadMmdbRecords(const std::string& path, const MmdbLoadSpec& spec, std::optional<int64_t> effective_time_ms,
                       const RecordHandler& handler) {
  std::unique_ptr<MmdbFile> file;
  PLANB_RETURN_IF_ERROR(MmdbFile::Open(path, MmdbLimits(), &file));
  int64_t time_ms = 0;
  if (effective_time_ms) {
    time_ms = *effective_time_ms;
  } else if (file->build_epoch() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1000)) {
    time_ms = static_cast<int64_t>(file->build_epoch()) * 1000;
  } else {
    return Status::Corruption(path + ": build_epoch " + std::to_string(file->build_epoch()) +
                              " is past any time Plan B keeps; give --effective-time");
  }
  std::string from, to;
  uint64_t networks = 0;
  return file->ForEachNetwork([&](const MmdbNetwork& network) {
    from = AddressText(network.first.data(), network.ipv6);
    to = AddressText(network.last.data(), network.ipv6);
    if (network.ipv6 && spec.ipv4_only) {
      return Status::Invalid(path + ": network " + from + "/" + std::to_string(network.prefix_len) +
                             " is IPv6, and map " + spec.map + " has key_format = ipv4 (give it key_format = ip)");
    }
    ParsedRecord parsed;
    parsed.map = spec.map;
    parsed.line = ++networks;  // the network's place in the file, for messages
    parsed.column = 1;
    Record& r = parsed.record;
    r.kind = RecordKind::kReference;
    r.has_range = true;
    r.range_from = Bytes(from);
    r.range_to = Bytes(to);
    r.time_ms = time_ms;
    r.has_value = true;
    r.value_type = ValueType::kJson;
    r.value = Bytes(network.record_json);
    Status s = handler(parsed);
    if (!s.ok()) {
      return Status(s.code(), path + ": network " + from + "/" + std::to_string(network.prefix_len) + ": " +
                                  s.message());
    }
    return Status::Ok();
  });
}

}  // namespace planb
