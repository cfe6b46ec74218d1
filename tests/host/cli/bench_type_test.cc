// `planb bench --type T [--scheme S] [--option k=v] [--plugin-dir D] --data F.xml`: no config, one map made from
// the flags, benched beside the raw LMDB baseline (host/scheme_trial/raw_baseline.h) with ratios to it in every
// output format; every bad flag refused. Speed is never asserted; that the figures exist and relate is.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/cli/cli_test_env.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
namespace fs = std::filesystem;

constexpr int kRecords = 200;

class BenchType : public ::testing::Test {
 protected:
  BenchType() : scratch_(dir_ / "scratch"), data_(dir_ / "sample.xml") {
    fs::create_directories(scratch_);
    std::string body;
    for (int i = 0; i < kRecords; ++i)
      body += Ref("sample", "key-" + std::to_string(i), "value " + std::to_string(i)) + "\n";
    WriteFile(data_, ReferenceData(body));
  }
  // planb bench ARGS --data sample.xml --runs 1 --lookups 100 --scratch S, run where there is no planb.ini.
  ProcessResult Bench(std::vector<std::string> args) const {
    args.insert(args.begin(), "bench");
    args.insert(args.end(), {"--data", data_, "--runs", "1", "--lookups", "100", "--scratch", scratch_});
    return RunPlanb(args, dir_.path());
  }
  void ExpectBadInput(const std::vector<std::string>& args, const std::vector<std::string>& said) const {
    const ProcessResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    for (const std::string& s : said) EXPECT_THAT(r.err, HasSubstr(s));
    EXPECT_THAT(r.out, IsEmpty());
    EXPECT_THAT(VisibleEntries(scratch_), IsEmpty());
  }

  TempDir dir_;
  std::string scratch_;
  std::string data_;
};

TEST_F(BenchType, JsonHasTheSchemeRowsAndRawLmdbWithRatiosToIt) {
  const ProcessResult r = Bench({"--type", "state", "--scheme", "direct", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 3u);  // direct, direct+value_dedup, raw-lmdb
  EXPECT_EQ(rows[0]["scheme"], "direct");
  EXPECT_EQ(rows[1]["scheme"], "direct");
  EXPECT_EQ(rows[2]["scheme"], "raw-lmdb");
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row["map"], "sample");
    EXPECT_EQ(row["type"], "state");
    EXPECT_EQ(row["records"], kRecords);
    EXPECT_EQ(row["rows"], kRecords);
    EXPECT_EQ(row["hit_lookups"], 100);
    for (const char* f : {"load_rows_per_s", "merge_rows_per_s", "hit_p50_ns", "miss_p50_ns", "load_x_raw",
                          "merge_x_raw", "hit_p50_x_raw", "miss_p50_x_raw"}) {
      ASSERT_TRUE(row[f].is_number()) << f << " " << row.dump();
      EXPECT_GT(row[f].get<double>(), 0) << f;
    }
  }
  // The ratios are the figures' own: raw LMDB is 1 to itself, a scheme's hit ratio is its p50 over raw's.
  for (const char* f : {"load_x_raw", "merge_x_raw", "hit_p50_x_raw", "miss_p50_x_raw"}) EXPECT_EQ(rows[2][f], 1.0);
  const double expected = rows[0]["hit_p50_ns"].get<double>() / rows[2]["hit_p50_ns"].get<double>();
  EXPECT_NEAR(rows[0]["hit_p50_x_raw"].get<double>(), expected, 0.006);
  EXPECT_EQ(rows[2]["recommended"], false);
  EXPECT_EQ(rows[2]["configured"], false);
  EXPECT_EQ(rows[0]["configured"], true);  // --scheme direct is the map's scheme
  EXPECT_THAT(VisibleEntries(scratch_), IsEmpty());
}

TEST_F(BenchType, CsvAndTableShowTheRatioColumns) {
  ProcessResult r = Bench({"--type", "state", "--scheme", "hashed", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_THAT(header, HasSubstr(",unusable,load_x_raw,merge_x_raw,hit_p50_x_raw,miss_p50_x_raw"));
  EXPECT_THAT(r.out, HasSubstr("\nsample,state,raw-lmdb,false,false,200,200,"));
  EXPECT_THAT(r.out, HasSubstr(",1.00,1.00,1.00,1.00\n"));
  r = Bench({"--type", "state", "--scheme", "hashed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hit_p50_x_raw"));
  EXPECT_THAT(r.out, HasSubstr("1.00x"));
  EXPECT_THAT(r.out, HasSubstr("raw-lmdb: the same keys and values put into plain LMDB files"));
}

TEST_F(BenchType, WithoutSchemeEverySchemeIsTriedAndAnAuthorsPluginDirIsLoaded) {
  ProcessResult r =
      Bench({"--type", "kit_ok", "--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/kit", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  std::set<std::string> schemes;
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row["type"], "kit_ok");
    schemes.insert(row["scheme"].get<std::string>());
  }
  EXPECT_EQ(schemes, (std::set<std::string>{"direct", "hashed", "hybrid", "lookup_table", "variable", "raw-lmdb"}));
}

TEST_F(BenchType, ConfigModeHasNoRawBaseline) {
  WriteFile(dir_ / "planb.ini", "[map.sample]\ntype = state\n");
  const ProcessResult r = Bench({"--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("raw")));
}

TEST_F(BenchType, OptionsReachTheMap) {
  const ProcessResult r = Bench({"--type", "state", "--scheme", "hashed", "--option", "value_dedup=true", "--option",
                                 "hash_bits=64", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nsample,state,hashed,true,true,"));  // value_dedup=true is the configured one
}

TEST_F(BenchType, BadFlagsAreRefused) {
  ExpectBadInput({"--type", "nosuch"}, {"--type: unknown store type 'nosuch' (loaded: ", "state"});
  ExpectBadInput({"--type", "state", "--scheme", "nosuch"}, {"--scheme: unknown key scheme 'nosuch'", "hashed"});
  ExpectBadInput({"--type", "state", "--option", "value_dedup"}, {"--option value_dedup: not NAME=VALUE"});
  ExpectBadInput({"--type", "state", "--option", "a b=1"}, {"the name may hold only letters, digits and '_'"});
  ExpectBadInput({"--type", "state", "--option", "no_such_option=1"}, {"--type, --scheme, --option", "no_such_option"});
  ExpectBadInput({"--type", "state", "--scheme", "hashed", "--option", "value_dedup=perhaps"}, {"value_dedup"});
  ExpectBadInput({"--type", "ranged"}, {"--type ranged takes no key scheme"});
  ExpectBadInput({"--scheme", "direct"}, {"--scheme goes with --type"});
  ExpectBadInput({"--option", "a=1"}, {"--option goes with --type"});
  ExpectBadInput({"--type", "state", "--maps", "sample"}, {"--maps does not go with --type"});
  ExpectBadInput({"--type", "state", "--map", "Not a map!"}, {"--map", "not a map name"});
  // The data holds no record of the map the flags make.
  ExpectBadInput({"--type", "state", "--map", "other"}, {"no usable rows", "other"});
}

}  // namespace
}  // namespace planb::testing
