// IPv6 address text to its 16 bytes, the first step of every IPv6 lookup through the read index
// (host/reader/range_answer_index.cc): the hand parser of plain forms (host/reader/ipv6_text.h) beside glibc's
// inet_pton (the baseline, what the index used before) and the SDK's ip::ParseAddress (inet_pton behind a copy
// into a NUL-terminated buffer: what a store type pays), in the same run. This is what decides whether the hand
// parser earns its place.
//
// Addresses: 10,000 texts in the forms lookups meet: 2001:db8::/64 with random low 64 bits (as ranged_lookup_bench
// loads), full eight-group addresses, and short ones with a "::" (fe80::1:2, 2001:db8::1). Every one is checked at
// setup to parse to the same bytes each way.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host/reader/ipv6_text.h"
#include "planb/ip_address.h"
#include "support/ratio_reporter.h"

namespace planb::bench {
namespace {

std::vector<std::string> g_texts;

std::string Format(const uint8_t bytes[16]) {
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, bytes, text, sizeof(text)) == nullptr) std::abort();
  return text;
}

void MakeTexts() {
  std::mt19937_64 random(42);
  for (int i = 0; i < 10000; ++i) {
    uint8_t bytes[16] = {};
    const uint64_t high = random(), low = random();
    for (int b = 0; b < 8; ++b) {
      bytes[b] = static_cast<uint8_t>(high >> (56 - 8 * b));
      bytes[8 + b] = static_cast<uint8_t>(low >> (56 - 8 * b));
    }
    switch (i % 3) {
      case 0:  // 2001:db8::/64, random interface id
        bytes[0] = 0x20, bytes[1] = 0x01, bytes[2] = 0x0d, bytes[3] = 0xb8;
        std::memset(bytes + 4, 0, 4);
        break;
      case 1:  // every group set
        break;
      default:  // a short one: a link-local or documentation address with a small interface id
        std::memset(bytes, 0, 14);
        bytes[0] = (i & 1) ? 0xfe : 0x20;
        bytes[1] = (i & 1) ? 0x80 : 0x01;
        break;
    }
    g_texts.push_back(Format(bytes));
  }
  // The three ways must agree before any is timed.
  for (const std::string& text : g_texts) {
    in6_addr want;
    if (inet_pton(AF_INET6, text.c_str(), &want) != 1) std::abort();
    unsigned __int128 hand = 0;
    ip::Address sdk;
    bool ipv4 = true;
    if (!ParsePlainIpv6(text, &hand) || ip::ParseAddress(text, &sdk, &ipv4) != nullptr || ipv4 ||
        std::memcmp(sdk.bytes, want.s6_addr, 16) != 0) {
      std::fprintf(stderr, "ip_text_bench: the parsers disagree on %s\n", text.c_str());
      std::exit(1);
    }
    for (int b = 0; b < 16; ++b) {
      if (static_cast<uint8_t>(hand >> (120 - 8 * b)) != want.s6_addr[b]) {
        std::fprintf(stderr, "ip_text_bench: the hand parser reads %s wrongly\n", text.c_str());
        std::exit(1);
      }
    }
  }
}

// inet_pton needs a NUL-terminated string: the texts are std::strings, so c_str() is free here (a lookup's key
// arrives as a string_view and would need the copy ParseAddress makes).
void RawInetPton(benchmark::State& state) {
  size_t i = 0;
  for (auto _ : state) {
    in6_addr out;
    benchmark::DoNotOptimize(inet_pton(AF_INET6, g_texts[i].c_str(), &out));
    benchmark::DoNotOptimize(out);
    if (++i == g_texts.size()) i = 0;
  }
}

void SdkParseAddress(benchmark::State& state) {
  size_t i = 0;
  for (auto _ : state) {
    ip::Address out;
    bool ipv4 = false;
    benchmark::DoNotOptimize(ip::ParseAddress(g_texts[i], &out, &ipv4));
    benchmark::DoNotOptimize(out);
    if (++i == g_texts.size()) i = 0;
  }
}

void HandParser(benchmark::State& state) {
  size_t i = 0;
  for (auto _ : state) {
    unsigned __int128 out = 0;
    benchmark::DoNotOptimize(ParsePlainIpv6(g_texts[i], &out));
    benchmark::DoNotOptimize(out);
    if (++i == g_texts.size()) i = 0;
  }
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  MakeTexts();
  benchmark::RegisterBenchmark("ipv6_text/raw_inet_pton", RawInetPton);
  benchmark::RegisterBenchmark("ipv6_text/sdk_parse_address", SdkParseAddress);
  benchmark::RegisterBenchmark("ipv6_text/hand_parser", HandParser);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
