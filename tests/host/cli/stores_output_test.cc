// `planb stores --format table|json|csv` (issue 40): each map's content version, rows, bytes, free share, its
// max_store_size and the share of it left, and the batches staged, quarantined and held back for it, the same in
// every format, on a single node, a storage node and a reader; a bad --format and a missing config are errors
// (exit 2). Real processes on real homes; the JSON parsed with nlohmann-json, the CSV with the project's reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/statvfs.h>

#include "host/cli/cli_test_env.h"
#include "host/common/csv.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/storage/home.h"
#include "host/transfer/batch_zip.h"
#include "support/cluster_fixture.h"
#include "support/map_fixture.h"
#include "support/reader_fixture.h"
#include "planb/reader.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::CliEnv;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ProcessResult;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::planb::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kConfig[] =
    "[map.a]\ntype = state\nscheme = hashed\nmax_store_size = 1MiB\n"
    "[map.b]\ntype = state\nscheme = hashed\n";

const std::vector<std::string> kCsvHeader = {
    "map",          "type",           "scheme",         "measured",       "rows",             "content_version",
    "content_digest", "bytes",        "free_share",     "max_store_size", "room_share",       "read_index_bytes",
    "read_index_max_size", "read_index_note", "staged",
    "quarantined",  "held",           "last_condensed", "last_reclaimed", "snapshot_version", "snapshot_digest",
    "snapshot_fetched", "snapshot_source", "unavailable"};

// The records of `text` read with the project's RFC 4180 reader, by the first field, the header checked.
std::map<std::string, std::map<std::string, std::string>> ReadCsv(const std::string& text,
                                                                  const std::vector<std::string>& header) {
  std::istringstream in(text);
  CsvReader reader(in, "stores.csv");
  std::vector<std::string_view> fields;
  bool got = false;
  std::map<std::string, std::map<std::string, std::string>> records;
  EXPECT_TRUE(reader.Next(&fields, &got).ok());
  EXPECT_TRUE(got);
  EXPECT_EQ(std::vector<std::string>(fields.begin(), fields.end()), header);
  while (true) {
    const Status s = reader.Next(&fields, &got);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok() || !got) break;
    EXPECT_EQ(fields.size(), header.size()) << "line " << reader.line();
    std::map<std::string, std::string> record;
    for (size_t i = 0; i < fields.size() && i < header.size(); ++i) record[header[i]] = std::string(fields[i]);
    records[record[header[0]]] = record;
  }
  return records;
}

const nlohmann::json* MapOf(const nlohmann::json& doc, const std::string& map) {
  for (const nlohmann::json& m : doc["maps"]) {
    if (m["map"] == map) return &m;
  }
  return nullptr;
}

// Moves a batch of map a into `env`'s quarantine/, as the merge processor does after its third failed attempt;
// returns its file name.
std::string QuarantineABatchOfA(const CliEnv& env) {
  TempDir writer_dir;
  std::unique_ptr<Runtime> writer_runtime;
  EXPECT_TRUE(testing::OpenTestRuntime(writer_dir.path(), kConfig, &writer_runtime).ok());
  StreamWriter writer(writer_runtime->catalog(), writer_dir / "stream");
  EXPECT_TRUE(writer.Add("a", testing::StateRecord("k0", "quarantined")).ok());
  EXPECT_TRUE(writer.Finish().ok());
  const std::string zip = env.dir() + "/quarantined.zip";
  EXPECT_TRUE(ZipBatch(writer_dir / "stream", zip, ZipOptions{true, "test/quarantined"}).ok());
  Home home;
  EXPECT_TRUE(Home::Open(env.home(), &home).ok());
  uint64_t sequence = 0;
  EXPECT_TRUE(StagingStore(home).Stage(zip, &sequence).ok());
  QuarantinedBatch moved;
  EXPECT_TRUE(QuarantineBatch(home, home.staging() + "/" + StagingStore::BatchFileName(sequence), {"a"}, true,
                              "merge failed 3 times; last: the test's", &moved)
                  .ok());
  return moved.name;
}

TEST(StoresOutput, EveryFormatSaysTheSameOfEachMapWithItsStagedAndQuarantinedBatches) {
  CliEnv env(kConfig);
  const std::string quarantined = QuarantineABatchOfA(env);
  ASSERT_EQ(env.Run({"load", "--no-wait", env.Write("a.xml", ReferenceData(Ref("a", "k1", "v1")))}).exit_code, 0);
  ASSERT_EQ(env.Load({env.Write("b.xml", ReferenceData(Ref("b", "k1", "v1") + Ref("b", "k2", "v2")))}).exit_code, 0);

  const ProcessResult table = env.Run({"stores"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::ContainsRegex("\na +state +hashed +- +- +- +- +1MiB +- +- +1 +1 +- +-\n"));
  // READ_INDEX 40: two 16-byte entries (8 of head, "k1" and "v1") and a directory of one bucket and its end.
  EXPECT_THAT(table.out, ::testing::ContainsRegex("\nb +state +hashed +2 +1 +[0-9]+ +[0-9]+% +10GiB +[0-9]+% +40 +0 +0 "
                                                  "+- +-\n"));
  const std::string qzip = env.home() + "/quarantine/" + quarantined;
  EXPECT_THAT(table.out, HasSubstr("quarantined: 1 batch(es) in " + env.home() + "/quarantine\n"));
  EXPECT_THAT(table.out, HasSubstr("    to release it, fix its cause and move it back: mv " + qzip + " " + env.home() +
                                   "/staging/"));
  EXPECT_THAT(table.out, HasSubstr("blocked: map a: staged batch "));

  const ProcessResult json = env.Run({"stores", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);  // one document
  const nlohmann::json* a = MapOf(doc, "a");
  const nlohmann::json* b = MapOf(doc, "b");
  ASSERT_TRUE(a != nullptr && b != nullptr) << json.out;
  EXPECT_EQ((*a)["max_store_size"], 1048576);
  EXPECT_TRUE((*a)["room_share"].is_null());  // no shard yet
  EXPECT_EQ((*a)["staged"], 1);
  EXPECT_EQ((*a)["quarantined"], 1);
  EXPECT_EQ((*a)["held"], 1);
  EXPECT_EQ((*b)["rows"], 2);
  EXPECT_EQ((*b)["content_version"]["batches"], 1);
  EXPECT_EQ((*b)["max_store_size"], uint64_t{10} << 30);
  EXPECT_GT((*b)["room_share"].get<double>(), 0.99);
  EXPECT_LT((*b)["room_share"].get<double>(), 1.0);
  EXPECT_EQ((*b)["staged"], 0);
  EXPECT_EQ((*b)["quarantined"], 0);
  ASSERT_EQ(doc["quarantined"].size(), 1u);
  EXPECT_EQ(doc["quarantined"][0]["batch"], quarantined);
  EXPECT_THAT(doc["quarantined"][0]["release"].get<std::string>(), HasSubstr("mv " + qzip));
  ASSERT_EQ(doc["held"].size(), 1u);
  EXPECT_EQ(doc["held"][0]["map"], "a");
  // The home's filesystem, as statvfs says it here (give or take what other processes write meanwhile).
  struct statvfs fs {};
  ASSERT_EQ(statvfs(env.home().c_str(), &fs), 0);
  const double free_here = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  EXPECT_EQ(doc["disk"]["home"], env.home());
  EXPECT_NEAR(doc["disk"]["free_bytes"].get<double>(), free_here, 256.0 * 1024 * 1024);
  EXPECT_GE(doc["disk"]["keep_free_bytes"].get<uint64_t>(), uint64_t{64} << 20);
  EXPECT_THAT(table.out, ::testing::ContainsRegex("\ndisk: [0-9]+ bytes free at " + env.home() + " \\(loads keep " +
                                                  std::to_string(doc["disk"]["keep_free_bytes"].get<uint64_t>()) +
                                                  " free\\)\n"));

  const ProcessResult csv = env.Run({"stores", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  auto records = ReadCsv(csv.out, kCsvHeader);
  ASSERT_EQ(records.size(), 2u) << csv.out;
  std::map<std::string, std::string>& ra = records["a"];
  std::map<std::string, std::string>& rb = records["b"];
  EXPECT_EQ(ra["rows"], "");
  EXPECT_EQ(ra["content_version"], "");
  EXPECT_EQ(ra["max_store_size"], "1048576");
  EXPECT_EQ(ra["staged"], "1");
  EXPECT_EQ(ra["quarantined"], "1");
  EXPECT_EQ(ra["held"], "1");
  EXPECT_EQ(rb["measured"], "true");
  EXPECT_EQ(rb["rows"], "2");
  EXPECT_EQ(rb["content_version"], "1");
  EXPECT_EQ(rb["content_digest"], (*b)["content_version"]["digest"].get<std::string>());
  EXPECT_EQ(rb["bytes"], std::to_string((*b)["bytes"].get<uint64_t>()));
  EXPECT_EQ(std::stod(rb["free_share"]), (*b)["free_share"].get<double>());
  EXPECT_EQ(std::stod(rb["room_share"]), (*b)["room_share"].get<double>());
  EXPECT_EQ(rb["staged"], "0");
  EXPECT_EQ(rb["snapshot_version"], "");  // a single node reads its shards
}

// The read index of ranged and State maps: its bytes (what the Reader's Stats report for the same shard), "off"
// when read_index_max_size = 0, "over" past it; none for other types.
TEST(StoresOutput, RangedAndStateMapsShowTheirReadIndexInEveryFormat) {
  CliEnv env(
      "[map.geo]\ntype = ranged\nkey_format = ipv4\n"
      "[map.off]\ntype = ranged\nkey_format = ipv4\nread_index_max_size = 0\n"
      "[map.tiny]\ntype = ranged\nkey_format = ipv4\nread_index_max_size = 1KiB\n"
      "[map.b]\ntype = temporal\nscheme = hashed\n"
      "[map.st]\ntype = state\n");
  std::string rows = "from,to,value\n";
  for (int i = 0; i < 200; ++i) rows += "10.0." + std::to_string(i) + ".0,10.0." + std::to_string(i) + ".127,v\n";
  const std::string csv = env.Write("ranges.csv", rows);
  for (const char* map : {"geo", "off", "tiny"}) {
    const ProcessResult r = env.Run({"load", "--format", "csv", "--map", map, "--from", "from", "--to", "to",
                                     "--value", "value", csv});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_EQ(env.Load({env.Write("b.xml", ReferenceData(Ref("b", "k", "v") + Ref("st", "k", "v")))}).exit_code, 0);

  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Prepare("geo").ok());
  ASSERT_TRUE(reader->Prepare("st").ok());
  ASSERT_TRUE(reader->Maintain().ok());  // builds the State map's (maintenance does, beside the lookups)
  uint64_t reader_bytes = 0;
  uint64_t state_bytes = 0;
  for (const MapStats& m : reader->Stats().maps) reader_bytes = m.map == "geo" ? m.read_index_bytes : reader_bytes;
  for (const MapStats& m : reader->Stats().maps) state_bytes = m.map == "st" ? m.read_index_bytes : state_bytes;
  ASSERT_GT(reader_bytes, 0u);
  ASSERT_GT(state_bytes, 0u);

  const ProcessResult json = env.Run({"stores", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::map<std::string, nlohmann::json> maps;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  for (const nlohmann::json& m : doc["maps"]) maps[m["map"].get<std::string>()] = m;
  EXPECT_EQ(maps["geo"]["read_index_bytes"], reader_bytes);
  EXPECT_EQ(maps["geo"]["read_index_max_size"], 256u << 20);
  EXPECT_TRUE(maps["geo"]["read_index_note"].is_null());
  EXPECT_TRUE(maps["off"]["read_index_bytes"].is_null());
  EXPECT_EQ(maps["off"]["read_index_note"], "off");
  EXPECT_EQ(maps["tiny"]["read_index_note"], "over");
  EXPECT_EQ(maps["tiny"]["read_index_max_size"], 1024);
  EXPECT_TRUE(maps["b"]["read_index_bytes"].is_null());
  EXPECT_TRUE(maps["b"]["read_index_max_size"].is_null());
  EXPECT_EQ(maps["st"]["read_index_bytes"], state_bytes);

  const ProcessResult table = env.Run({"stores"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::map<std::string, std::string> cells;  // map -> its READ_INDEX cell (the tenth column)
  std::istringstream lines(table.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.size() == 14) cells[w[0]] = w[9];
  }
  EXPECT_EQ(cells["MAP"], "READ_INDEX");
  EXPECT_EQ(cells["geo"], std::to_string(reader_bytes));
  EXPECT_EQ(cells["off"], "off");
  EXPECT_EQ(cells["tiny"], "over");
  EXPECT_EQ(cells["b"], "-");
  EXPECT_EQ(cells["st"], std::to_string(state_bytes));

  const ProcessResult csv_out = env.Run({"stores", "--format", "csv"});
  ASSERT_EQ(csv_out.exit_code, 0) << csv_out.err;
  auto records = ReadCsv(csv_out.out, kCsvHeader);
  EXPECT_EQ(records["geo"]["read_index_bytes"], std::to_string(reader_bytes));
  EXPECT_EQ(records["off"]["read_index_note"], "off");
  EXPECT_EQ(records["tiny"]["read_index_note"], "over");
  EXPECT_EQ(records["b"]["read_index_max_size"], "");
}

TEST(StoresOutput, ABadFormatIsAnErrorNamingTheFormats) {
  CliEnv env(kConfig);
  for (const std::string format : {"yaml", "CSV", ""}) {
    const ProcessResult r = env.Run({"stores", "--format", format});
    EXPECT_EQ(r.exit_code, 2) << format;
    EXPECT_THAT(r.err, HasSubstr("planb: stores: --format: '" + format + "' is not one of table, json, csv"));
    EXPECT_EQ(r.out, "");
  }
}

// Without a config there are no maps: an empty table used to say "nothing here" with exit 0.
TEST(StoresOutput, NoConfigIsAnErrorNamingThePathLookedFor) {
  TempDir cwd;
  const ProcessResult r = testing::RunPlanb({"--home", cwd / "home", "stores"}, cwd.path());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("planb: stores: no config: " + fs::canonical(cwd.path()).string() +
                               "/planb.ini (the default) was not found; give --config FILE"));
  EXPECT_EQ(r.out, "");
  // The default found there is read.
  testing::WriteFile(cwd / "planb.ini", kConfig);
  const ProcessResult found = testing::RunPlanb({"--home", cwd / "home", "stores", "--format", "csv"}, cwd.path());
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_EQ(ReadCsv(found.out, kCsvHeader).size(), 2u);
}

// A storage node and a reader: the reader's records carry its snapshots; --cluster takes csv too.
TEST(StoresOutput, OnAStorageNodeAndAReaderAndAcrossTheCluster) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string file = cluster.dir() + "/capitals.xml";
  testing::WriteFile(file, ReferenceData(Ref("country_to_capital", "Wales", "Cardiff")));
  ASSERT_TRUE(cluster.LoadAndWaitMerged({file}));

  const ProcessResult node =
      testing::RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "stores", "--format", "csv"});
  ASSERT_EQ(node.exit_code, 0) << node.err;
  std::map<std::string, std::string> capitals = ReadCsv(node.out, kCsvHeader)["country_to_capital"];
  EXPECT_EQ(capitals["rows"], "1");
  EXPECT_EQ(capitals["content_version"], "1");
  EXPECT_EQ(capitals["staged"], "0");
  EXPECT_EQ(capitals["snapshot_version"], "");

  cluster.WriteReaderConfig("reader");
  ASSERT_EQ(cluster.RunOnReader("reader", {"lookup", "country_to_capital", "Wales"}).out, "Cardiff\n");
  const ProcessResult reader = cluster.RunOnReader("reader", {"stores", "--format", "csv"});
  ASSERT_EQ(reader.exit_code, 0) << reader.err;
  capitals = ReadCsv(reader.out, kCsvHeader)["country_to_capital"];
  EXPECT_EQ(capitals["rows"], "");  // a reader holds no shard
  EXPECT_EQ(capitals["snapshot_version"], "1");
  EXPECT_EQ(capitals["snapshot_source"], "node1");
  EXPECT_THAT(capitals["snapshot_fetched"], ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z"));
  const ProcessResult reader_json = cluster.RunOnReader("reader", {"stores", "--format", "json"});
  ASSERT_EQ(reader_json.exit_code, 0) << reader_json.err;
  const nlohmann::json doc = nlohmann::json::parse(reader_json.out);
  ASSERT_EQ(doc["snapshots"].size(), 1u);
  EXPECT_EQ(doc["snapshots"][0]["content_version"]["digest"], capitals["snapshot_digest"]);

  const ProcessResult versions = cluster.RunOnReader("reader", {"stores", "--cluster", "--format", "csv"});
  ASSERT_EQ(versions.exit_code, 0) << versions.err;
  const auto by_map = ReadCsv(versions.out, {"map", "node1", "state"});
  ASSERT_EQ(by_map.count("country_to_capital"), 1u) << versions.out;
  EXPECT_EQ(by_map.at("country_to_capital").at("node1"), "1");
  EXPECT_EQ(by_map.at("country_to_capital").at("state"), "in step");
  EXPECT_EQ(cluster.process(0).Stop(), 0);
}

}  // namespace
}  // namespace planb
