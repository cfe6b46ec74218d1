// The verifier program's command line (verify_job.h): what the node encodes reads back the same, and every
// malformed form is refused naming what is wrong.
#include "host/storage/verify_job.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace planb {
namespace {

VerifyJob TwoMaps() {
  VerifyJob job;
  job.dir = "/tmp/scratch dir";
  VerifyMapJob state;
  state.config.name = "city_to_country";
  state.config.type = "state";
  state.config.scheme = "hashed";
  state.config.max_store_size = uint64_t{1} << 40;
  state.config.max_readers = 7;
  state.config.plugin_options = {{"hash_bits", "32"}, {"value_dedup", "true"}, {"odd", "a\nb c"}, {"empty", ""}};
  state.type_file = "/lib/planb/plugins/libplanb_state.so";
  state.scheme_file = "/lib/planb/plugins/libplanb_hashed_key.so";
  VerifyMapJob ranged;
  ranged.config.name = "ip_owner";
  ranged.config.type = "ranged";
  ranged.type_file = "/lib/planb/plugins/libplanb_ranged.so";
  job.maps = {state, ranged};
  return job;
}

TEST(VerifyJob, ReadsBackWhatItWrote) {
  const VerifyJob job = TwoMaps();
  VerifyJob read;
  ASSERT_TRUE(DecodeVerifyJob(EncodeVerifyJob(job), &read).ok());
  EXPECT_EQ(read.dir, job.dir);
  ASSERT_EQ(read.maps.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const MapConfig& want = job.maps[i].config;
    const MapConfig& got = read.maps[i].config;
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.type, want.type);
    EXPECT_EQ(got.scheme, want.scheme);
    EXPECT_EQ(got.max_store_size, want.max_store_size);
    EXPECT_EQ(got.max_readers, want.max_readers);
    EXPECT_EQ(got.plugin_options, want.plugin_options);
    EXPECT_EQ(read.maps[i].type_file, job.maps[i].type_file);
    EXPECT_EQ(read.maps[i].scheme_file, job.maps[i].scheme_file);
  }
}

// Decodes `args`; expects a refusal whose message holds `part`.
void ExpectRefused(const std::vector<std::string>& args, const std::string& part) {
  VerifyJob job;
  const Status s = DecodeVerifyJob(args, &job);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << ::testing::PrintToString(args);
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(VerifyJob, RefusesMalformedArguments) {
  const std::vector<std::string> good = EncodeVerifyJob(TwoMaps());
  ExpectRefused({}, "the directory is missing");
  ExpectRefused({""}, "the directory is empty");
  ExpectRefused({"/d"}, "no map to check");
  ExpectRefused({"/d", "--mapp"}, "expected --map, got '--mapp'");
  ExpectRefused({"/d", "--map", "Bad Name"}, "bad map name");
  ExpectRefused({"/d", "--map", "m", "state"}, "the map's scheme is missing");
  ExpectRefused({"/d", "--map", "m", "", "", "/t.so", "", "1", "1", "0"}, "has no type or no type plugin file");
  ExpectRefused({"/d", "--map", "m", "state", "", "", "", "1", "1", "0"}, "has no type or no type plugin file");
  ExpectRefused({"/d", "--map", "m", "state", "", "/t.so", "", "-1", "1", "0"}, "max_store_size '-1' is not a count");
  ExpectRefused({"/d", "--map", "m", "state", "", "/t.so", "", "1", "4294967296", "0"},
                "max_readers '4294967296' is not a count up to 4294967295");
  ExpectRefused({"/d", "--map", "m", "state", "", "/t.so", "", "1", "1", "x"}, "the option count 'x'");
  ExpectRefused({"/d", "--map", "m", "state", "", "/t.so", "", "1", "1", "99999999999"}, "up to 1024");
  ExpectRefused({"/d", "--map", "m", "state", "", "/t.so", "", "1", "1", "2", "k", "v", "k2"},
                "an option's value is missing");
  // Any cut of a good command line short of a whole map is refused.
  for (size_t keep = 2; keep < good.size(); ++keep) {
    if (good[keep] == "--map") continue;  // a cut right before the next map is a whole first map
    VerifyJob job;
    EXPECT_FALSE(DecodeVerifyJob(std::vector<std::string>(good.begin(), good.begin() + keep), &job).ok()) << keep;
  }
}

}  // namespace
}  // namespace planb
