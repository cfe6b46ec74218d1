#include "key_format.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "planb/ip_address.h"
#include "ranged_rows.h"

namespace planb::ranged {
namespace {

constexpr size_t kQuoted = 64;  // bytes of bad input shown in a message

bool IsSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// XML text around the value is not part of it (as for numbers).
std::string_view Trimmed(Bytes text) {
  std::string_view v = text.view();
  while (!v.empty() && IsSpace(static_cast<uint8_t>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && IsSpace(static_cast<uint8_t>(v.back()))) v.remove_suffix(1);
  return v;
}

Bound FromAddress(const ip::Address& a) { return GetBound(a.bytes, 16); }

Code BadAddress(ErrorBuffer* error, const char* element, Bytes text, const char* why) {
  const int shown = static_cast<int>(text.size < kQuoted ? text.size : kQuoted);
  return Fail(error, Code::kInvalidArgument, "%s '%.*s%s' %s", element, shown,
              reinterpret_cast<const char*>(text.data), text.size > kQuoted ? "..." : "", why);
}

}  // namespace

bool ParseKeyFormat(const char* text, KeyFormat* out) {
  if (text == nullptr || std::strcmp(text, "number") == 0) {
    *out = KeyFormat::kNumber;
  } else if (std::strcmp(text, "ipv4") == 0) {
    *out = KeyFormat::kIpv4;
  } else if (std::strcmp(text, "ip") == 0) {
    *out = KeyFormat::kIp;
  } else {
    return false;
  }
  return true;
}

bool ParseKeyFormat(const PluginArgs* args, KeyFormat* out, ErrorBuffer* error) {
  const char* text = FindOption(*args, kKeyFormatOption);
  if (ParseKeyFormat(text, out)) return true;
  (void)Fail(error, Code::kInvalidArgument, "map '%s': key_format '%.64s' is not one of number, ipv4, ip",
             args->map_name != nullptr ? args->map_name : "", text);
  return false;
}

const char* FormatBound(Bound b, KeyFormat format, char* out) {
  if (format == KeyFormat::kNumber) {
    std::snprintf(out, kBoundText, "%" PRId64, ToNumber(b));
  } else {
    ip::Address a;
    BoundAddress(b, format, a.bytes);
    ip::Format(a, out);
  }
  return out;
}

Code ParseKeyBounds(Bytes text, KeyFormat format, const char* element, Bound* first, Bound* last,
                    ErrorBuffer* error) {
  if (format == KeyFormat::kNumber) {
    int64_t n = 0;
    const Code code = ParseNumber(text, element, &n, error);
    *first = *last = FromNumber(n);
    return code;
  }
  const std::string_view v = Trimmed(text);
  uint32_t decimal = 0;
  if (ip::ParseDecimalIpv4(v, &decimal)) {
    // An IPv4 address as a number (the Tor and other range files give them so): in an `ip` map, the same
    // address mapped into IPv6 (::ffff:a.b.c.d), as its dotted form would be, so such a file loads as it comes.
    *first = *last = format == KeyFormat::kIpv4 ? FromNumber(decimal) : FromAddress(ip::MapIpv4(decimal));
    return Code::kOk;
  }
  ip::Block block;
  const char* why = ip::ParseBlock(v, &block);
  if (why != nullptr) return BadAddress(error, element, text, why);
  if (format == KeyFormat::kIpv4) {
    if (!block.ipv4) return BadAddress(error, element, text, "is not an IPv4 address (key_format = ipv4)");
    *first = FromNumber(ip::Ipv4Of(block.first));
    *last = FromNumber(ip::Ipv4Of(block.last));
  } else {
    *first = FromAddress(block.first);
    *last = FromAddress(block.last);
  }
  return Code::kOk;
}

Code ParseBound(Bytes text, KeyFormat format, const char* element, Bound* out, ErrorBuffer* error) {
  if (format != KeyFormat::kNumber && Trimmed(text).find('/') != std::string_view::npos) {
    return BadAddress(error, element, text, "is a CIDR block: only <key> takes one");
  }
  Bound last = 0;
  return ParseKeyBounds(text, format, element, out, &last, error);
}

void BoundAddress(Bound b, KeyFormat format, uint8_t* out16) {
  if (format == KeyFormat::kIp) {
    PutBound(out16, b, 16);
  } else {
    const ip::Address a = ip::MapIpv4(static_cast<uint32_t>(ToNumber(b)));
    std::memcpy(out16, a.bytes, 16);
  }
}

bool AddressBound(const uint8_t* in16, KeyFormat format, Bound* out, bool* below) {
  ip::Address a;
  std::memcpy(a.bytes, in16, 16);
  if (format == KeyFormat::kIp) {
    *out = FromAddress(a);
    return true;
  }
  if (!ip::IsMapped(a)) {
    *below = std::memcmp(a.bytes, ip::MapIpv4(0).bytes, 16) < 0;
    return false;
  }
  *out = FromNumber(ip::Ipv4Of(a));
  return true;
}

}  // namespace planb::ranged
