// JSON values (ValueType kJson, SDK 7.8): loaded from --value-json and from JSON lines' non-string values, stored
// as their text, and answered as JSON: nested in lookup/query --format json and in enrich, exact text in text and
// csv, ValueType "json"; a string stays a string. Real processes on a real home; documents parsed by nlohmann.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using ::testing::HasSubstr;

constexpr char kConfig[] = "[map.geo]\ntype = state\n[map.rates]\ntype = temporal\n";

class JsonValues : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string jsonl = env_.Write(
        "geo.jsonl",
        "{\"ip\":\"a\",\"info\":{\"country\":{\"iso_code\":\"GB\",\"names\":[\"UK\",\"Britain\"]},\"lat\":51.50}}\n"
        "{\"ip\":\"b\",\"info\":\"plain text\"}\n"
        "{\"ip\":\"c\",\"info\":1.50}\n"
        "{\"ip\":\"d\",\"info\":[true,null]}\n");
    ProcessResult r = env_.Run({"load", "--format", "jsonl", "--map", "geo", "--key", "ip", "--value", "info", jsonl});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string csv = env_.Write("e.csv", "ip,cc,city\ne,FR,\"Paris \"\"centre\"\"\"\n");
    r = env_.Run({"load", "--format", "csv", "--map", "geo", "--key", "ip", "--value-json", "cc,city", csv});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string Out(const std::vector<std::string>& args) const {
    const ProcessResult r = env_.Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  CliEnv env_{kConfig};
};

TEST_F(JsonValues, TextAndCsvGiveTheExactText) {
  EXPECT_EQ(Out({"lookup", "geo", "a"}),
            "{\"country\":{\"iso_code\":\"GB\",\"names\":[\"UK\",\"Britain\"]},\"lat\":51.50}\n");
  EXPECT_EQ(Out({"lookup", "geo", "c"}), "1.50\n") << "numbers keep their text";
  EXPECT_EQ(Out({"lookup", "geo", "b"}), "plain text\n");
  EXPECT_EQ(Out({"lookup", "geo", "e"}), "{\"cc\":\"FR\",\"city\":\"Paris \\\"centre\\\"\"}\n");
  const std::string csv = Out({"query", "geo", "--format", "csv"});
  EXPECT_THAT(csv, HasSubstr("json,\"{\"\"country\"\":{\"\"iso_code\"\":\"\"GB\"\"")) << csv;
  EXPECT_THAT(csv, HasSubstr("json,1.50")) << csv;
}

TEST_F(JsonValues, JsonFormatsNestTheValue) {
  const nlohmann::json one = nlohmann::json::parse(Out({"lookup", "geo", "a", "--format", "json"}));
  ASSERT_TRUE(one.is_array()) << one.dump();
  EXPECT_EQ(one[0]["value"]["country"]["iso_code"], "GB");
  EXPECT_EQ(one[0]["value"]["country"]["names"][1], "Britain");
  EXPECT_DOUBLE_EQ(one[0]["value"]["lat"].get<double>(), 51.5);
  EXPECT_THAT(Out({"lookup", "geo", "c", "--format", "json"}), HasSubstr("\"value\":1.50"));

  const nlohmann::json rows = nlohmann::json::parse(Out({"query", "geo", "--format", "json"}));
  std::map<std::string, nlohmann::json> by_key;
  for (const nlohmann::json& row : rows) by_key[row["Key"].get<std::string>()] = row;
  ASSERT_EQ(by_key.size(), 5u) << rows.dump();
  EXPECT_EQ(by_key["a"]["ValueType"], "json");
  EXPECT_TRUE(by_key["a"]["Value"].is_object());
  EXPECT_EQ(by_key["b"]["ValueType"], "string") << "a JSON string is stored as the text it holds";
  EXPECT_EQ(by_key["b"]["Value"], "plain text");
  EXPECT_TRUE(by_key["c"]["Value"].is_number());
  EXPECT_EQ(by_key["d"]["Value"], nlohmann::json::parse("[true,null]"));
  EXPECT_EQ(by_key["e"]["Value"]["city"], "Paris \"centre\"");
}

TEST_F(JsonValues, EnrichWritesTheWholeRecord) {
  const std::string events = env_.Write("events.jsonl", "{\"client\":{\"ip\":\"a\"}}\n{\"client\":{\"ip\":\"b\"}}\n");
  const ProcessResult r = env_.Run({"enrich", "--lookup", "geo=geo:client.ip", events});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  const nlohmann::json event = nlohmann::json::parse(first);
  EXPECT_EQ(event["geo"]["country"]["iso_code"], "GB") << first;
  EXPECT_THAT(first, HasSubstr("\"lat\":51.50")) << "numbers keep their text";
  const nlohmann::json second = nlohmann::json::parse(r.out.substr(r.out.find('\n') + 1));
  EXPECT_EQ(second["geo"], "plain text");
}

// #MEMBER writes one member of a JSON answer; a record without it (or an answer that is not JSON) is a miss for
// that target, counted, not an error.
TEST_F(JsonValues, EnrichWritesOneMemberWithHash) {
  const std::string events = env_.Write("events.jsonl", "{\"ip\":\"a\"}\n{\"ip\":\"b\"}\n");
  const ProcessResult r = env_.Run({"enrich", "--lookup", "cc=geo:ip#country.iso_code", "--lookup", "lat=geo:ip#lat",
                                    "--lookup", "name=geo:ip#country.names", "--lookup", "none=geo:ip#nope",
                                    "--on-miss", "tag", events});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"ip\":\"a\",\"cc\":\"GB\",\"lat\":51.50,\"name\":[\"UK\",\"Britain\"],\"planb_miss\":[\"none\"]}\n"
            "{\"ip\":\"b\",\"planb_miss\":[\"cc\",\"lat\",\"name\",\"none\"]}\n");
  EXPECT_THAT(r.err, HasSubstr("cc=geo:ip#country.iso_code: 1 hit, 1 miss (1 found without #country.iso_code)"));
  EXPECT_THAT(r.err, HasSubstr("none=geo:ip#nope: 0 hits, 2 misses (2 found without #nope)"));

  const std::string csv = env_.Write("events.csv", "ip\ne\n");
  const ProcessResult cells =
      env_.Run({"enrich", "--input", "csv", "--lookup", "city=geo:ip#city", "--lookup", "cc=geo:ip#cc", csv});
  ASSERT_EQ(cells.exit_code, 0) << cells.err;
  EXPECT_EQ(cells.out, "ip,city,cc\r\ne,\"Paris \"\"centre\"\"\",FR\r\n") << "a string member's text, unescaped";

  const ProcessResult bad = env_.Run({"enrich", "--lookup", "cc=geo:ip#", events});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--lookup 'cc=geo:ip#': #member"));
}

}  // namespace
}  // namespace planb
