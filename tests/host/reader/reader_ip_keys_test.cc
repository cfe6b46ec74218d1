// planb::Reader on ranged maps with key_format = ip / ipv4: looked up by address text (single and batched),
// Describe says the keys are text and the range's bounds addresses, numbers and malformed addresses are errors naming the map or the text.
// Data is loaded by the real planb binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "host/cli/cli_test_env.h"
#include "planb/reader.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::ReferenceData;

constexpr char kConfig[] =
    "[map.geo]\ntype = ranged\nkey_format = ip\n"
    "[map.tgeo]\ntype = temporal_ranged\nkey_format = ip\n"
    "[map.geo4]\ntype = ranged\nkey_format = ipv4\n";

std::unique_ptr<Reader> LoadAndOpen(const CliEnv& env) {
  std::string body;
  for (const char* map : {"geo", "tgeo", "geo4"}) {
    body += std::string("<reference><map>") + map + "</map><key>10.0.0.0/8</key><value>ten</value></reference>\n";
    body += std::string("<reference><map>") + map + "</map><key>10.1.0.0/16</key><value>ten-one</value></reference>\n";
  }
  body += "<reference><map>geo</map><key>2001:db8::/32</key><value>doc</value></reference>\n";
  const ProcessResult r = env.Load({env.Write("geo.xml", ReferenceData(body))});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ReaderOptions options;
  options.config_path = env.config();
  options.home = env.home();
  std::unique_ptr<Reader> reader;
  const Status s = Reader::Open(options, &reader);
  EXPECT_TRUE(s.ok()) << s.message();
  return reader;
}

TEST(ReaderIpKeys, LooksUpByAddressText) {
  CliEnv env(kConfig);
  std::unique_ptr<Reader> reader = LoadAndOpen(env);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->Lookup("geo", "10.1.2.3").value.view(), "ten-one");
  EXPECT_EQ(reader->Lookup("geo", "10.2.0.0").value.view(), "ten");
  EXPECT_EQ(reader->Lookup("geo", "2001:db8::7").value.view(), "doc");
  EXPECT_EQ(reader->Lookup("geo", "11.0.0.0").code, Code::kNotFound);
  EXPECT_EQ(reader->Lookup("tgeo", "10.1.2.3", LookupTime::Now()).value.view(), "ten-one");
  EXPECT_EQ(reader->Lookup("geo4", "10.1.2.3").value.view(), "ten-one");
  EXPECT_EQ(reader->Lookup("geo4", "167838211").value.view(), "ten-one");  // 10.1.2.3 as a decimal

  ReaderKey keys[3];
  keys[0].key = "10.9.9.9";
  keys[1].key = "::1";
  keys[2].key = "10.1.0.0";
  LookupResult results[3];
  EXPECT_EQ(reader->LookupMany("geo", keys, 3, results), Code::kOk);
  EXPECT_EQ(results[0].value.view(), "ten");
  EXPECT_EQ(results[1].code, Code::kNotFound);
  EXPECT_EQ(results[2].value.view(), "ten-one");

  MapInfo info;
  ASSERT_TRUE(reader->Describe("geo", &info).ok());
  EXPECT_FALSE(info.number_keys);
  // The range's bounds are addresses here, as queries see them (a ranged map of numbers: FieldKind::kNumber).
  int bounds = 0;
  for (const FieldInfo& field : info.fields) {
    if (field.name == "KeyStart" || field.name == "KeyEnd") {
      EXPECT_EQ(field.kind, FieldKind::kAddress) << field.name;
      ++bounds;
    }
  }
  EXPECT_EQ(bounds, 2);
}

TEST(ReaderIpKeys, NumbersAndMalformedAddressesAreErrors) {
  CliEnv env(kConfig);
  std::unique_ptr<Reader> reader = LoadAndOpen(env);
  ASSERT_NE(reader, nullptr);
  LookupResult r = reader->Lookup("geo", int64_t{167838211});
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("map geo (type ranged) is keyed by text, not numbers"));
  r = reader->Lookup("geo", "10.1.2");
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("lookup key '10.1.2' is not an IP address"));
  r = reader->Lookup("geo4", "2001:db8::1");
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("'2001:db8::1' is not an IPv4 address"));
  // One bad key in a batch fails only its own result.
  ReaderKey keys[2];
  keys[0].key = "nope";
  keys[1].key = "10.0.0.1";
  LookupResult results[2];
  EXPECT_EQ(reader->LookupMany("geo", keys, 2, results), Code::kInvalidArgument);
  EXPECT_EQ(results[0].code, Code::kInvalidArgument);
  EXPECT_EQ(results[1].value.view(), "ten");
}

}  // namespace
}  // namespace planb
