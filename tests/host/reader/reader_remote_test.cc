// planb::Reader in remote mode (ReaderOptions::remote): lookups are READs to a real `planb serve` on loopback
// over connections kept open. Every answer (value, value type, session bounds, own fields, misses, refused keys)
// must equal what a Reader reading a snapshot of the same shard gives, for every store type of the example
// config plus a histogram and an ip map.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "planb/reader.h"
#include "planb/reader_c.h"
#include "support/cluster_fixture.h"
#include "support/reader_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using testing::ClusterFixture;
using ::testing::HasSubstr;

const std::string kExtraMaps = std::string(testing::kHitsHistogramSection) +
    "[map.geo]\ntype = ranged\nkey_format = ip\n"
    "[map.never_loaded]\ntype = state\n";

int64_t At(const char* iso) {
  int64_t ms = 0;
  EXPECT_TRUE(Reader::ParseTime(iso, &ms)) << iso;
  return ms;
}

// A cluster of one storage node holding the example data, the hits histogram and the geo ranges.
void StartLoadedCluster(ClusterFixture& cluster) {
  cluster.extra_map_sections = kExtraMaps;
  ASSERT_TRUE(cluster.StartNode(0)) << cluster.process(0).log();
  std::vector<std::string> files = testing::ExampleDataFiles();
  for (const std::string& f : testing::WriteHitsFiles(cluster.dir(), 2, 40)) files.push_back(f);
  files.push_back(cluster.dir() + "/geo.xml");
  testing::WriteFile(files.back(),
                     "<referenceData xmlns=\"reference-data:2\">\n"
                     "<reference><map>geo</map><key>10.0.0.0/8</key><value>ten</value></reference>\n"
                     "<reference><map>geo</map><key>10.1.0.0/16</key><value>ten-one</value></reference>\n"
                     "<reference><map>geo</map><key>2001:db8::/32</key><value>doc</value></reference>\n"
                     "</referenceData>\n");
  ASSERT_TRUE(cluster.LoadAndWaitMerged(files));
}

std::unique_ptr<Reader> OpenRemote(ClusterFixture& cluster, const std::string& name, size_t connections = 4) {
  ReaderOptions options;
  options.config_path = cluster.WriteReaderConfig(name);
  options.home = cluster.ReaderHome(name);
  options.maintenance_interval_ms = 0;
  options.remote = true;
  options.remote_connections = connections;
  std::unique_ptr<Reader> reader;
  const Status s = Reader::Open(options, &reader);
  EXPECT_TRUE(s.ok()) << s.message();
  return reader;
}

// One key to ask about: text or number, now or at an instant.
struct Probe {
  std::string key;
  int64_t number = 0;
  LookupTime time = LookupTime::Now();
};
Probe Text(const std::string& key) { return {key, 0, LookupTime::Now()}; }
Probe TextAt(const std::string& key, const char* iso) { return {key, 0, LookupTime::At(At(iso))}; }
Probe Number(int64_t n) { return {"", n, LookupTime::Now()}; }
Probe NumberAt(int64_t n, const char* iso) { return {"", n, LookupTime::At(At(iso))}; }

struct MapProbes {
  const char* map;
  std::vector<Probe> probes;
};

std::vector<MapProbes> AllProbes() {
  return {
      {"city_to_country", {Text("Praia"), Text("Benghazi"), Text("Perth"), Text("Nowhere")}},
      {"country_to_capital", {Text("Austria"), Text("Sri Lanka"), Text("Côte d'Ivoire"), Text("Atlantis")}},
      {"user_to_role", {Text("jsmith42"), Text("bnowak"), Text("nobody")}},
      {"host_to_location", {Text("web-prod-001.lon.example.net"), Text("no-such-host")}},
      {"employeeidtooffice", {Number(1500), Number(2999), Number(99999), Number(-5)}},
      {"user_to_department",
       {TextAt("user000", "2023-01-01"), TextAt("user000", "2024-01-01"), TextAt("user000", "2000-01-01"),
        Text("user000"), TextAt("user999", "2024-01-01")}},
      {"ip_range_to_site", {NumberAt(167837697, "2024-01-01"), NumberAt(167837697, "2020-01-01"), Number(1)}},
      {"user_app_sessions",
       {TextAt("user000_app2", "2024-01-01T17:30:00Z"), TextAt("user000_app2", "2024-01-01T12:00:00Z"),
        TextAt("nobody", "2024-01-01T17:30:00Z")}},
      {"hits",
       {TextAt("page-3", "2024-01-01T10:30:00Z"), TextAt("page-3", "2024-01-01T14:10:00Z"),
        TextAt("page-3", "2025-01-01"), TextAt("page-99", "2024-01-01T10:30:00Z")}},
      {"geo", {Text("10.1.2.3"), Text("10.9.9.9"), Text("2001:db8::7"), Text("11.0.0.0"), Text("::1")}},
  };
}

LookupResult Ask(Reader& reader, const char* map, const Probe& p) {
  return p.key.empty() ? reader.Lookup(map, p.number, p.time) : reader.Lookup(map, p.key, p.time);
}

std::string Describe(const LookupResult& r) {
  std::string s = "code " + std::to_string(static_cast<int>(r.code));
  if (r.code == Code::kOk) {
    s += " value '" + std::string(r.value.view()) + "' type " + std::to_string(static_cast<int>(r.value_type)) +
         " session " + std::to_string(r.session_start_ms) + ".." + std::to_string(r.session_end_ms) + " fields";
    for (uint32_t i = 0; i < r.field_count; ++i) {
      s += " [" + std::string(r.fields[i].text.view()) + "|" + std::to_string(r.fields[i].number) + "|" +
           std::to_string(r.fields[i].real) + "|" + std::to_string(r.fields[i].flag) + "]";
    }
  } else if (r.code != Code::kNotFound) {
    s += std::string(" error ") + r.error;
  }
  return s;
}

// Compares what the two readers answered, field by field (errors by code: the messages name other things).
void ExpectSameAnswer(const LookupResult& remote, const LookupResult& local, const std::string& what) {
  if (local.code != Code::kOk && local.code != Code::kNotFound) {
    EXPECT_EQ(remote.code, local.code) << what << ": remote " << Describe(remote) << ", local " << Describe(local);
    return;
  }
  EXPECT_EQ(Describe(remote), Describe(local)) << what;
}

class ReaderRemoteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new ClusterFixture(1);
    StartLoadedCluster(*cluster_);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static ClusterFixture* cluster_;
};
ClusterFixture* ReaderRemoteTest::cluster_ = nullptr;

TEST_F(ReaderRemoteTest, AnswersEqualThoseOfASnapshotForEveryStoreType) {
  std::unique_ptr<Reader> local =
      testing::OpenTestReader(cluster_->WriteReaderConfig("local"), cluster_->ReaderHome("local"));
  std::unique_ptr<Reader> remote = OpenRemote(*cluster_, "remote_all");
  ASSERT_NE(local, nullptr);
  ASSERT_NE(remote, nullptr);
  size_t found = 0;
  for (const MapProbes& m : AllProbes()) {
    std::vector<ReaderKey> keys;
    for (const Probe& p : m.probes) {
      const std::string what = std::string(m.map) + " key '" + p.key + "'/" + std::to_string(p.number);
      const LookupResult l = Ask(*local, m.map, p);
      // Kept as text: the next lookup of the map on this thread ends the views.
      const std::string expected = Describe(l);
      const LookupResult r = Ask(*remote, m.map, p);
      EXPECT_EQ(Describe(r), expected) << what;
      if (l.code == Code::kOk) ++found;
      ReaderKey key;
      key.key = p.key;
      key.number = p.number;
      key.time = p.time;
      keys.push_back(key);
    }
    // The same keys as one batch: a READ per distinct instant, results in the keys' order.
    std::vector<LookupResult> local_results(keys.size()), remote_results(keys.size());
    const Code local_code = local->LookupMany(m.map, keys.data(), keys.size(), local_results.data());
    const Code remote_code = remote->LookupMany(m.map, keys.data(), keys.size(), remote_results.data());
    EXPECT_EQ(remote_code, local_code) << m.map;
    for (size_t i = 0; i < keys.size(); ++i) {
      ExpectSameAnswer(remote_results[i], local_results[i], std::string(m.map) + " batch key " + std::to_string(i));
    }
  }
  EXPECT_GE(found, 20u) << "the probes must mostly hit, or the comparison says little";
}

TEST_F(ReaderRemoteTest, OneThreadsLookupsShareOneConnection) {
  std::unique_ptr<Reader> remote = OpenRemote(*cluster_, "remote_one");
  ASSERT_NE(remote, nullptr);
  for (int i = 0; i < 50; ++i) {
    const LookupResult r = remote->Lookup("city_to_country", i % 2 == 0 ? "Praia" : "Benghazi");
    ASSERT_EQ(r.code, Code::kOk) << r.error;
    EXPECT_EQ(r.value.view(), i % 2 == 0 ? "Cape Verde" : "Libya");
  }
  const ReaderStats stats = remote->Stats();
  EXPECT_EQ(stats.remote_connections, 1u);
  bool seen = false;
  for (const MapStats& m : stats.maps) {
    EXPECT_TRUE(m.reads_remote) << m.map;
    EXPECT_FALSE(m.reads_snapshot) << m.map;
    if (m.map != "city_to_country") continue;
    seen = true;
    EXPECT_EQ(m.lookups, 50u);
    EXPECT_EQ(m.found, 50u);
    EXPECT_TRUE(m.serving);
    ASSERT_TRUE(m.content_version.has_value());
    EXPECT_GE(*m.content_version, 1u);
  }
  EXPECT_TRUE(seen);
}

TEST_F(ReaderRemoteTest, ARefusedKeyOrAKeyOfTheWrongKindFailsOnlyItsOwnResult) {
  std::unique_ptr<Reader> remote = OpenRemote(*cluster_, "remote_refused");
  ASSERT_NE(remote, nullptr);
  ReaderKey keys[4];
  keys[0].key = "nope";
  keys[1].key = "10.0.0.1";
  keys[2].number = 7;  // the geo map is keyed by text: refused before any READ
  keys[3].key = "10.1.9.9";
  LookupResult results[4];
  EXPECT_EQ(remote->LookupMany("geo", keys, 4, results), Code::kInvalidArgument);
  EXPECT_EQ(results[0].code, Code::kInvalidArgument);
  EXPECT_THAT(results[0].error, HasSubstr("'nope' is not an IP address"));
  EXPECT_EQ(results[1].value.view(), "ten");
  EXPECT_EQ(results[2].code, Code::kInvalidArgument);
  EXPECT_THAT(results[2].error, HasSubstr("keyed by text, not numbers"));
  EXPECT_EQ(results[3].value.view(), "ten-one");
  // A time for a map without time, alone.
  const LookupResult r = remote->Lookup("city_to_country", "Praia", LookupTime::At(0));
  EXPECT_EQ(r.code, Code::kInvalidArgument);
}

// Keys too many for one READ (a megabyte) go in several, answered in the keys' order.
TEST_F(ReaderRemoteTest, ABatchLargerThanOneReadIsSplitAndAnsweredInOrder) {
  std::unique_ptr<Reader> remote = OpenRemote(*cluster_, "remote_split");
  ASSERT_NE(remote, nullptr);
  std::vector<std::string> texts;
  for (int i = 0; i < 40000; ++i) {
    texts.push_back(i % 3 == 0 ? "Praia" : "a-city-that-is-nowhere-at-all-" + std::to_string(i));
  }
  std::vector<ReaderKey> keys(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) keys[i].key = texts[i];
  std::vector<LookupResult> results(keys.size());
  EXPECT_EQ(remote->LookupMany("city_to_country", keys.data(), keys.size(), results.data()), Code::kOk);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i % 3 == 0) {
      ASSERT_EQ(results[i].code, Code::kOk) << i;
      ASSERT_EQ(results[i].value.view(), "Cape Verde") << i;
    } else {
      ASSERT_EQ(results[i].code, Code::kNotFound) << i;
    }
  }
  EXPECT_EQ(remote->Stats().remote_connections, 1u);
}

TEST_F(ReaderRemoteTest, AMapWithNoDataOnTheNodeIsNoDataNamingTheNode) {
  std::unique_ptr<Reader> remote = OpenRemote(*cluster_, "remote_nodata");
  ASSERT_NE(remote, nullptr);
  const LookupResult r = remote->Lookup("never_loaded", "k");
  EXPECT_EQ(r.code, Code::kNoData);
  EXPECT_THAT(r.error, HasSubstr("never_loaded"));
  EXPECT_THAT(r.error, HasSubstr("node1"));
  const Status s = remote->Prepare("never_loaded");
  EXPECT_EQ(s.code(), Code::kNoData) << s.message();
  EXPECT_TRUE(remote->Prepare("city_to_country").ok());
  EXPECT_EQ(remote->Prepare("no_such_map").code(), Code::kInvalidArgument);
}

// Threads share the pool's connections: never more than it holds, every answer right.
TEST_F(ReaderRemoteTest, ThreadsShareAtMostTheConfiguredConnections) {
  std::unique_ptr<Reader> remote = OpenRemote(*cluster_, "remote_threads", 2);
  ASSERT_NE(remote, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&remote, &wrong, t] {
      for (int i = 0; i < 100; ++i) {
        const bool praia = (i + t) % 2 == 0;
        const LookupResult r = remote->Lookup("city_to_country", praia ? "Praia" : "Benghazi");
        if (r.code != Code::kOk || r.value.view() != (praia ? "Cape Verde" : "Libya")) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  const ReaderStats stats = remote->Stats();
  EXPECT_GE(stats.remote_connections, 1u);
  EXPECT_LE(stats.remote_connections, 2u);
}

TEST_F(ReaderRemoteTest, TheCApiOpensARemoteReader) {
  const std::string config = cluster_->WriteReaderConfig("remote_c");
  const std::string home = cluster_->ReaderHome("remote_c");
  planb_reader_options_t* options = planb_reader_options_create();
  planb_reader_options_set_config(options, config.data(), config.size());
  planb_reader_options_set_home(options, home.data(), home.size());
  planb_reader_options_set_maintenance_interval_ms(options, 0);
  planb_reader_options_set_remote(options, 1);
  planb_reader_options_set_remote_connections(options, 0);
  char error[256];
  EXPECT_EQ(planb_reader_open(options, error, sizeof error), nullptr);
  EXPECT_THAT(error, HasSubstr("remote_connections is 0"));
  planb_reader_options_set_remote_connections(options, 1);
  planb_reader_t* reader = planb_reader_open(options, error, sizeof error);
  planb_reader_options_destroy(options);
  ASSERT_NE(reader, nullptr) << error;
  planb_result_t r;
  ASSERT_EQ(planb_reader_lookup(reader, "city_to_country", 15, "Praia", 5, nullptr, &r), PLANB_OK) << r.error;
  EXPECT_EQ(std::string(r.value, r.value_len), "Cape Verde");
  EXPECT_EQ(planb_reader_lookup_number(reader, "employeeidtooffice", 18, 1500, nullptr, &r), PLANB_OK) << r.error;
  EXPECT_EQ(std::string(r.value, r.value_len), "London HQ, Security team");
  EXPECT_EQ(planb_reader_lookup(reader, "never_loaded", 12, "k", 1, nullptr, &r), PLANB_NO_DATA);
  planb_reader_close(reader);
}

TEST(ReaderRemote, MergesAreSeenByTheNextLookup) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  testing::LoadAtlantis(cluster, "Poseidonia");
  std::unique_ptr<Reader> remote = OpenRemote(cluster, "remote");
  ASSERT_NE(remote, nullptr);
  EXPECT_EQ(remote->Lookup("country_to_capital", "Atlantis").value.view(), "Poseidonia");
  testing::LoadAtlantis(cluster, "Metropolis");
  EXPECT_EQ(remote->Lookup("country_to_capital", "Atlantis").value.view(), "Metropolis");
  EXPECT_TRUE(remote->Refresh("country_to_capital").ok());
  EXPECT_TRUE(remote->Maintain().ok());
}

TEST(ReaderRemote, ANodeThatIsDownFailsLookupsNamingItAndIsAskedAgainWhenBack) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  testing::LoadAtlantis(cluster, "Poseidonia");
  std::unique_ptr<Reader> remote = OpenRemote(cluster, "remote");
  ASSERT_NE(remote, nullptr);
  EXPECT_EQ(remote->Lookup("country_to_capital", "Atlantis").value.view(), "Poseidonia");
  ASSERT_EQ(cluster.process(0).Stop(), 0) << cluster.process(0).log();
  LookupResult r = remote->Lookup("country_to_capital", "Atlantis");
  EXPECT_EQ(r.code, Code::kIOError);
  EXPECT_THAT(r.error, HasSubstr("no storage node answered: node1"));
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  r = remote->Lookup("country_to_capital", "Atlantis");
  ASSERT_EQ(r.code, Code::kOk) << r.error;
  EXPECT_EQ(r.value.view(), "Poseidonia");
}

TEST(ReaderRemote, OpenRefusesAConfigWithoutNodesAndZeroConnections) {
  testing::TempDir dir;
  const std::string config = dir / "planb.ini";
  testing::WriteFile(config, "[map.m]\ntype = state\n");
  ReaderOptions options;
  options.config_path = config;
  options.home = dir / "home";
  options.maintenance_interval_ms = 0;
  options.remote = true;
  std::unique_ptr<Reader> reader;
  Status s = Reader::Open(options, &reader);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("has no node_list"));
  EXPECT_THAT(s.message(), HasSubstr(config));

  ClusterFixture cluster(1);
  options.config_path = cluster.WriteReaderConfig("zero");
  options.remote_connections = 0;
  s = Reader::Open(options, &reader);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("remote_connections is 0"));
}

// With CURVE, a client the nodes know with the read right is answered over its kept connection; one without
// the right is refused, said as kPermissionDenied, not as a node that did not answer.
TEST(ReaderRemote, CurveClientsNeedTheReadRight) {
  ClusterFixture cluster(1);
  cluster.EnableCurve();
  cluster.client_sections =
      testing::ClientSection("proc", cluster.key("proc").public_key, "upload") +
      testing::ClientSection("reader", cluster.NewKey("reader").public_key, "read") +
      testing::ClientSection("loader", cluster.NewKey("loader").public_key, "upload");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  testing::LoadAtlantis(cluster, "Poseidonia");
  std::unique_ptr<Reader> reader = OpenRemote(cluster, "reader");
  ASSERT_NE(reader, nullptr);
  for (int i = 0; i < 3; ++i) {
    const LookupResult r = reader->Lookup("country_to_capital", "Atlantis");
    ASSERT_EQ(r.code, Code::kOk) << r.error;
    EXPECT_EQ(r.value.view(), "Poseidonia");
  }
  EXPECT_EQ(reader->Stats().remote_connections, 1u);
  std::unique_ptr<Reader> loader = OpenRemote(cluster, "loader");
  ASSERT_NE(loader, nullptr);
  const LookupResult r = loader->Lookup("country_to_capital", "Atlantis");
  EXPECT_EQ(r.code, Code::kPermissionDenied) << r.error;
  EXPECT_THAT(r.error, HasSubstr("not authorised for read"));
}

}  // namespace
}  // namespace planb
