// `planb stores`: one line per configured map with its type, scheme ("-" for the ranged types, which take none),
// rows, bytes of data.mdb, its free share and when maintenance last condensed and reclaimed it; "-" for a map
// with nothing merged yet. (maintain_command_test shows the marks after maintenance.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::kTypedMapsConfig;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::SessionEvent;
using testing::TimedRef;

struct StoreLine {
  std::string type, scheme, rows, bytes;
  std::string version;  // the content version's batch count; not compared by ==
  bool operator==(const StoreLine& o) const {
    return type == o.type && scheme == o.scheme && rows == o.rows && bytes == o.bytes;
  }
};

std::ostream& operator<<(std::ostream& out, const StoreLine& l) {
  return out << l.type << " " << l.scheme << " " << l.rows << " " << l.bytes;
}

// Runs `planb stores` and reads its lines by map, checking the header.
std::map<std::string, StoreLine> Stores(const CliEnv& env) {
  const ProcessResult r = env.Run({"stores"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::istringstream in(r.out);
  std::string line;
  std::map<std::string, StoreLine> lines;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.rfind("disk: ", 0) == 0) continue;  // the footer: the home's free disk
    std::istringstream words(line);
    std::string map;
    StoreLine l;
    std::string extra, free, max_size, room, read_index, staged, quarantined, condensed, reclaimed;
    words >> map >> l.type >> l.scheme >> l.rows >> l.version >> l.bytes >> free >> max_size >> room >> read_index >>
        staged >> quarantined >> condensed >> reclaimed;
    EXPECT_FALSE(words >> extra) << "more than fourteen columns: " << line;
    if (header) {
      EXPECT_EQ(map + " " + l.type + " " + l.scheme + " " + l.rows + " " + l.version + " " + l.bytes + " " + free +
                    " " + max_size + " " + room + " " + read_index + " " + staged + " " + quarantined + " " +
                    condensed + " " + reclaimed,
                "MAP TYPE SCHEME ROWS VERSION BYTES FREE MAX_SIZE ROOM READ_INDEX STAGED QUARANTINED LAST_CONDENSED "
                "LAST_RECLAIMED");
      header = false;
      continue;
    }
    // Free share and room in max_store_size: percentages once there is a shard; maintenance marks: "-" until
    // maintenance ran; nothing waits in staging/ or quarantine/ after a load that merged.
    EXPECT_TRUE(l.rows == "-" ? free == "-" : !free.empty() && free.back() == '%') << line;
    EXPECT_TRUE(l.rows == "-" ? room == "-" : !room.empty() && room.back() == '%') << line;
    EXPECT_EQ(max_size, "10GiB") << line;  // the default
    // A ranged or state map with rows: the bytes of its read index; every other map: none.
    const bool indexed = (l.type == "ranged" || l.type == "state") && l.rows != "-";
    EXPECT_TRUE(indexed ? !read_index.empty() && read_index.find_first_not_of("0123456789") == std::string::npos
                        : read_index == "-")
        << line;
    EXPECT_EQ(staged, "0") << line;
    EXPECT_EQ(quarantined, "0") << line;
    EXPECT_EQ(condensed, "-") << line;
    EXPECT_EQ(reclaimed, "-") << line;
    EXPECT_EQ(lines.count(map), 0u) << "listed twice: " << map;
    lines[map] = l;
  }
  return lines;
}

std::string DataBytes(const CliEnv& env, const std::string& map) {
  return std::to_string(std::filesystem::file_size(env.shard_data(map)));
}

TEST(CliStores, ListsEveryConfiguredMapWithTypeAndSchemeBeforeAnyLoad) {
  CliEnv env(kTypedMapsConfig);
  const std::map<std::string, StoreLine> expected = {
      {"st_hashed", {"state", "hashed", "-", "-"}},
      {"st_direct", {"state", "direct", "-", "-"}},
      {"tm_hashed", {"temporal", "hashed", "-", "-"}},
      {"tm_direct", {"temporal", "direct", "-", "-"}},
      {"rg", {"ranged", "-", "-", "-"}},
      {"trg", {"temporal_ranged", "-", "-", "-"}},
      {"ss_hashed", {"session", "hashed", "-", "-"}},
      {"ss_direct", {"session", "direct", "-", "-"}},
      {"tm_unused", {"temporal", "direct", "-", "-"}},
      {"rg_unused", {"ranged", "-", "-", "-"}},
  };
  EXPECT_EQ(Stores(env), expected);
}

TEST(CliStores, CountsTheRowsAndBytesOfEachLoadedMap) {
  CliEnv env(kTypedMapsConfig);
  const std::string file = env.Write("all.xml", ReferenceData(Lines({
                                                    TimedRef("st_hashed", "", "a", "1"),
                                                    TimedRef("st_hashed", "", "b", "2"),
                                                    TimedRef("st_hashed", "", "a", "3"),  // the same key: still one row
                                                    TimedRef("st_direct", "", "a", "1"),
                                                    TimedRef("tm_hashed", "2024-01-01T00:00:00Z", "a", "1"),
                                                    TimedRef("tm_hashed", "2024-02-01T00:00:00Z", "a", "2"),
                                                    TimedRef("tm_direct", "2024-01-01T00:00:00Z", "a", "1"),
                                                    TimedRef("tm_direct", "2024-01-01T00:00:00Z", "b", "1"),
                                                    TimedRef("tm_direct", "2024-03-01T00:00:00Z", "b", "2"),
                                                    RangeRef("rg", "", "1", "100", "outer"),
                                                    RangeRef("rg", "", "10", "20", "inner"),
                                                    TimedRef("rg", "", "-5", "x"),
                                                    RangeRef("trg", "2024-01-01T00:00:00Z", "1", "2", "a"),
                                                    RangeRef("trg", "2024-02-01T00:00:00Z", "1", "2", "b"),
                                                    SessionEvent("ss_hashed", "u", "2024-01-01T00:00:00Z", "1h"),
                                                    SessionEvent("ss_direct", "u", "2024-01-01T00:00:00Z", "1h"),
                                                    SessionEvent("ss_direct", "v", "2024-01-01T00:00:00Z"),
                                                })));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::map<std::string, StoreLine> expected = {
      {"st_hashed", {"state", "hashed", "2", DataBytes(env, "st_hashed")}},
      {"st_direct", {"state", "direct", "1", DataBytes(env, "st_direct")}},
      {"tm_hashed", {"temporal", "hashed", "2", DataBytes(env, "tm_hashed")}},
      {"tm_direct", {"temporal", "direct", "3", DataBytes(env, "tm_direct")}},
      {"rg", {"ranged", "-", "3", DataBytes(env, "rg")}},
      {"trg", {"temporal_ranged", "-", "2", DataBytes(env, "trg")}},
      {"ss_hashed", {"session", "hashed", "1", DataBytes(env, "ss_hashed")}},
      {"ss_direct", {"session", "direct", "2", DataBytes(env, "ss_direct")}},
      {"tm_unused", {"temporal", "direct", "-", "-"}},
      {"rg_unused", {"ranged", "-", "-", "-"}},
  };
  EXPECT_EQ(Stores(env), expected);
  for (const auto& [map, line] : expected) {
    if (line.bytes != "-") {
      EXPECT_GT(std::stoll(line.bytes), 0) << map;
    }
  }
}

TEST(CliStores, CountsRowsAfterASecondBatch) {
  CliEnv env(kTypedMapsConfig);
  ASSERT_EQ(env.Load({env.Write("one.xml", ReferenceData(Lines({TimedRef("tm_direct", "2024-01-01T00:00:00Z", "a", "1"),
                                                                TimedRef("st_direct", "", "a", "1")})))})
                .exit_code,
            0);
  EXPECT_EQ(Stores(env)["tm_direct"].rows, "1");
  ASSERT_EQ(env.Load({env.Write("two.xml", ReferenceData(Lines({TimedRef("tm_direct", "2024-02-01T00:00:00Z", "a", "2"),
                                                                TimedRef("st_direct", "", "a", "2")})))})
                .exit_code,
            0);
  std::map<std::string, StoreLine> lines = Stores(env);
  EXPECT_EQ(lines["tm_direct"].rows, "2") << "a second version is a second row";
  EXPECT_EQ(lines["st_direct"].rows, "1") << "a State key is replaced";
  EXPECT_EQ(lines["rg"].rows, "-");
  // The content version counts the batches merged into each shard (what nodes compare, docs/snapshots.md).
  EXPECT_EQ(lines["tm_direct"].version, "2");
  EXPECT_EQ(lines["st_direct"].version, "2");
  EXPECT_EQ(lines["rg"].version, "-");
  // The second file again: already merged, so the version does not move.
  ASSERT_EQ(env.Load({env.dir() + "/two.xml"}).exit_code, 0);
  EXPECT_EQ(Stores(env)["tm_direct"].version, "2");
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

TEST(CliStores, ClusterWithoutANodeListIsAnError) {
  testing::CliEnv env(testing::kTypedMapsConfig);
  const testing::ProcessResult r = env.Run({"stores", "--cluster"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("planb: stores --cluster: the config has no node_list"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

TEST(CliStores, JsonSaysWhatTheTableSaysTyped) {
  testing::CliEnv env(testing::kTypedMapsConfig);
  ASSERT_EQ(env.Load({env.Write("one.xml", testing::ReferenceData(testing::Lines(
                                               {testing::TimedRef("st_direct", "", "a", "1"),
                                                testing::TimedRef("st_direct", "", "b", "2")})))})
                .exit_code,
            0);
  const testing::ProcessResult r = env.Run({"stores", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc["maps"].is_array());
  bool loaded = false, empty = false;
  for (const nlohmann::json& m : doc["maps"]) {
    if (m["map"] == "st_direct") {
      loaded = true;
      EXPECT_EQ(m["type"], "state");
      EXPECT_EQ(m["scheme"], "direct");
      EXPECT_EQ(m["rows"], 2);
      EXPECT_EQ(m["content_version"]["batches"], 1);
      EXPECT_EQ(m["content_version"]["digest"].get<std::string>().size(), 16u);
      EXPECT_GT(m["bytes"].get<uint64_t>(), 0u);
      EXPECT_TRUE(m["free_share"].is_number());
      EXPECT_TRUE(m["last_condensed"].is_null());
    }
    if (m["map"] == "rg") {
      empty = true;
      EXPECT_TRUE(m["rows"].is_null());
      EXPECT_TRUE(m["content_version"].is_null());
      EXPECT_TRUE(m["scheme"].is_null());
    }
  }
  EXPECT_TRUE(loaded && empty) << r.out;
  EXPECT_TRUE(doc["quarantined"].is_array() && doc["quarantined"].empty());
  EXPECT_TRUE(doc["held"].is_array() && doc["held"].empty());
  EXPECT_FALSE(doc.contains("snapshots"));  // a single node reads its shards

  const testing::ProcessResult bad = env.Run({"stores", "--format", "yaml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("planb: stores: --format: 'yaml' is not one of table, json, csv"));
  EXPECT_EQ(bad.out, "");
}

}  // namespace
}  // namespace planb
