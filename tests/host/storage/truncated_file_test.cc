// A data.mdb shorter than its LMDB meta page says (truncated by a copy tool, a full disk, a hand): every opener
// refuses it with an error naming the file instead of faulting with SIGBUS on the first read past its end. The
// planb binary (lookup, query, stores) exits 2, and the Reader answers with an error. Real files, real processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "host/cli/cli_test_env.h"
#include "host/storage/map_env.h"
#include "planb/reader.h"
#include "support/map_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::CliEnv;
using ::planb::testing::ProcessResult;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::testing::HasSubstr;

// A home whose city_to_country shard holds enough rows to span well past the two meta pages.
class TruncatedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string body;
    for (int i = 0; i < 2000; ++i) {
      body += Ref("city_to_country", "city" + std::to_string(i), "country" + std::to_string(i)) + "\n";
    }
    const ProcessResult r = env_.Load({env_.Write("cities.xml", ReferenceData(body))});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    full_size_ = fs::file_size(shard());
    ASSERT_GT(full_size_, 8u * 4096);
  }
  std::string shard() const { return env_.shard_data("city_to_country"); }
  void Truncate(uintmax_t size) { fs::resize_file(shard(), size); }

  CliEnv env_;
  uintmax_t full_size_ = 0;
};

TEST_F(TruncatedFileTest, MapEnvRefusesEveryShortSize) {
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(testing::CreateMapPlugins(testing::MakeMapConfig("city_to_country", "state", "hashed"), &plugins).ok());
  const std::string dir = fs::path(shard()).parent_path().string();
  const std::string original = env_.dir() + "/original.mdb";
  fs::copy_file(shard(), original);
  // 0 and 100 bytes, one page, the two meta pages alone, one page short, one byte short.
  for (uintmax_t size : {uintmax_t{0}, uintmax_t{100}, uintmax_t{4096}, uintmax_t{8192}, full_size_ - 4096,
                         full_size_ - 1}) {
    fs::copy_file(original, shard(), fs::copy_options::overwrite_existing);
    Truncate(size);
    for (unsigned flags : {MapEnv::kShardFlags, MapEnv::kSnapshotFlags, MapEnv::kShardFlags | MDB_RDONLY}) {
      std::shared_ptr<MapEnv> env;
      const Status s = MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, flags, &env);
      EXPECT_EQ(s.code(), Code::kCorruption) << size << ": " << s.message();
      EXPECT_THAT(s.message(), HasSubstr(shard())) << size;
      EXPECT_EQ(env, nullptr);
    }
    EXPECT_EQ(fs::file_size(shard()), size) << "opening must not grow or rewrite the file";
  }
  // The truncated-past-the-meta case says so, with both sizes.
  fs::copy_file(original, shard(), fs::copy_options::overwrite_existing);
  Truncate(8192);
  std::shared_ptr<MapEnv> env;
  const Status s = MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
  EXPECT_THAT(s.message(), HasSubstr("truncated: the file has 8192 bytes"));
  EXPECT_THAT(s.message(), HasSubstr(std::to_string(full_size_)));

  // Whole again, it opens.
  fs::copy_file(original, shard(), fs::copy_options::overwrite_existing);
  const Status whole = MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
  EXPECT_TRUE(whole.ok()) << whole.message();
}

TEST_F(TruncatedFileTest, LookupQueryAndStoresExitTwoNamingTheFile) {
  Truncate(8192);
  const ProcessResult lookup = env_.Lookup("city_to_country", "city7");
  EXPECT_EQ(lookup.exit_code, 2) << lookup.err;  // was 135: SIGBUS
  EXPECT_THAT(lookup.err, HasSubstr(shard()));
  EXPECT_THAT(lookup.err, HasSubstr("truncated"));
  EXPECT_EQ(lookup.out, "");

  const ProcessResult query = env_.Run({"query", "city_to_country", "--where", "Key = 'city7'"});
  EXPECT_EQ(query.exit_code, 2) << query.err;
  EXPECT_THAT(query.err, HasSubstr(shard()));

  const ProcessResult stores = env_.Run({"stores"});
  EXPECT_EQ(stores.exit_code, 2) << stores.err;
  EXPECT_THAT(stores.err, HasSubstr(shard()));
  EXPECT_THAT(stores.out, HasSubstr("iptolocation"));  // the other maps are still listed
}

TEST_F(TruncatedFileTest, TheReaderAnswersWithAnError) {
  Truncate(8192);
  ReaderOptions options;
  options.config_path = env_.config();
  options.home = env_.home();
  options.maintenance_interval_ms = 0;
  std::unique_ptr<Reader> reader;
  const Status s = Reader::Open(options, &reader);
  ASSERT_TRUE(s.ok()) << s.message();
  const LookupResult r = reader->Lookup("city_to_country", "city7");
  EXPECT_EQ(r.code, Code::kCorruption);
  EXPECT_THAT(std::string(r.error), HasSubstr(shard()));
  // Another map of the same home still answers for itself (it has no data: that, not the other's corruption).
  const LookupResult other = reader->Lookup("iptolocation", "1.2.3.4");
  EXPECT_EQ(other.code, Code::kNoData);
  EXPECT_THAT(std::string(other.error), HasSubstr("map iptolocation has no data on this node"));
}

}  // namespace
}  // namespace planb
