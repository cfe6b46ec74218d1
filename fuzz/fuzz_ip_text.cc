// IPv6 address text read by hand for the read index (host/reader/ipv6_text.h), against glibc's inet_pton.
// Invariants: whatever the hand parser reads, inet_pton reads too, to the same 16 bytes (it may decline what
// inet_pton reads, such as embedded IPv4, and leave it to inet_pton; never the other way round, never other bytes).
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "host/reader/ipv6_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  unsigned __int128 hand = 0;
  if (!planb::ParsePlainIpv6(text, &hand)) return 0;
  const std::string terminated(text);  // inet_pton reads up to a NUL: a NUL inside must have been refused already
  planb::fuzz::Check(terminated.find('\0') == std::string::npos, "the hand parser read text holding a NUL byte");
  in6_addr want;
  planb::fuzz::Check(inet_pton(AF_INET6, terminated.c_str(), &want) == 1,
                     "the hand parser read text inet_pton refuses: " + terminated);
  for (int b = 0; b < 16; ++b) {
    planb::fuzz::Check(static_cast<uint8_t>(hand >> (120 - 8 * b)) == want.s6_addr[b],
                       "the hand parser reads other bytes than inet_pton: " + terminated);
  }
  return 0;
}
