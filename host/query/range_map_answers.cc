#include "host/export/ip_map_answers.h"

#include <arpa/inet.h>

#include <algorithm>
#include <unordered_map>

#include "host/plugin_host/key_format.h"
#include "host/query/map_scan.h"

namespace planb {
namespace {

constexpr Address128 kIpv4MappedStart = Address128{0xFFFF} << 32;
constexpr Address128 kIpv4MappedEnd = kIpv4MappedStart + 0xFFFFFFFFu;
constexpr Address128 kIpv4CompatibleEnd = 0xFFFFFFFFu;  // ::/96

Address128 FromBytes(const uint8_t* b) {
  Address128 a = 0;
  for (int i = 0; i < 16; ++i) a = (a << 8) | b[i];
  return a;
}

}  // namespace

std::string Address128Text(Address128 a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a >= kIpv4MappedStart && a <= kIpv4MappedEnd) {
    const uint32_t v4 = htonl(static_cast<uint32_t>(a));
    inet_ntop(AF_INET, &v4, text, sizeof text);
  } else {
    uint8_t bytes[16];
    for (int i = 15; i >= 0; --i) {
      bytes[i] = static_cast<uint8_t>(a);
      a >>= 8;
    }
    inet_ntop(AF_INET6, bytes, text, sizeof text);
  }
  return text;
}

Status ReadIpMapAnswers(const MapReader& reader, int64_t time_ms,
                        const std::function<void(uint64_t, uint64_t)>& progress, IpMapAnswers* out) {
  *out = IpMapAnswers();
  const MapEnv& env = reader.env();
  const std::string& map = env.plugins().config().name;
  std::vector<Address128> boundaries;
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(reader.table().txn, env.data()).WithContext(env.path()));
  ScanRequest request;
  ScanStats stats;
  Status row_error;
  PLANB_RETURN_IF_ERROR(ScanMapInTxn(
      env, reader.table().txn, cursor.get(), request,
      [&](const Row& row, Bytes, Bytes) {
        if (!row.has_addresses) {
          row_error = Status::Invalid("map " + map + ": a row without IP address bounds");
          return false;
        }
        const Address128 first = FromBytes(row.address_from);
        const Address128 last = FromBytes(row.address_to);
        ++out->rows;
        boundaries.push_back(first);
        if (last != ~Address128{0}) boundaries.push_back(last + 1);
        if (last <= kIpv4CompatibleEnd) out->ipv4_compatible_rows.emplace_back(first, last);
        return true;
      },
      &stats));
  PLANB_RETURN_IF_ERROR(row_error);
  const bool ipv4_map = MapKeyFormat(env.plugins().config()) == KeyFormat::kIpv4;
  if (!ipv4_map) {
    // ::/96 and ::ffff:0:0/96 are where a MaxMind DB keeps and aliases IPv4: ranges must break there.
    for (Address128 b : {Address128{0}, kIpv4CompatibleEnd + 1, kIpv4MappedStart, kIpv4MappedEnd + 1}) {
      boundaries.push_back(b);
    }
  }
  std::sort(boundaries.begin(), boundaries.end());
  boundaries.erase(std::unique(boundaries.begin(), boundaries.end()), boundaries.end());

  std::unordered_map<std::string, uint32_t> value_ids;
  std::string id_key;
  LookupKey key;
  key.time_ms = time_ms;
  Row row;
  std::string text;
  for (size_t i = 0; i < boundaries.size(); ++i) {
    if (progress && i % 65536 == 0) progress(i, boundaries.size());
    if (ipv4_map && boundaries[i] > kIpv4MappedEnd) continue;  // past 255.255.255.255: nothing, and no key
    text = Address128Text(boundaries[i]);
    key.key = Bytes(text);
    ErrorBuffer error;
    const Code code = reader.Lookup(key, &row, &error);
    ++out->lookups;
    if (code == Code::kNotFound) continue;
    if (code != Code::kOk) {
      return Status::FromPlugin(code, error).WithContext("map " + map + ": looking up " + text);
    }
    id_key.assign(1, static_cast<char>(row.value_type));
    id_key.append(row.value.view());
    auto [it, added] = value_ids.emplace(id_key, static_cast<uint32_t>(out->values.size()));
    if (added) out->values.push_back(AnswerValue{row.value_type, std::string(row.value.view())});
    const Address128 last = i + 1 < boundaries.size() ? boundaries[i + 1] - 1 : ~Address128{0};
    if (!out->ranges.empty() && out->ranges.back().value == it->second && out->ranges.back().last + 1 == boundaries[i] &&
        boundaries[i] != kIpv4CompatibleEnd + 1 && boundaries[i] != kIpv4MappedStart &&
        boundaries[i] != kIpv4MappedEnd + 1) {
      out->ranges.back().last = last;  // the same answer goes on
    } else {
      out->ranges.push_back(AnsweredRange{boundaries[i], last, it->second});
    }
  }
  if (progress) progress(boundaries.size(), boundaries.size());
  return Status::Ok();
}

}  // namespace planb
