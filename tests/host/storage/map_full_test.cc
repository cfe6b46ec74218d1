#include "host/storage/map_full.h"

#include <gtest/gtest.h>

#include <string>

#include "planb/lmdb.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::TempDir;

// A real LMDB file of 1 MiB filled until LMDB refuses a put: the Status as the host and the SDK's writers get it.
Status FillUntilFull(const std::string& dir) {
  Env env;
  Env::Options options;
  options.map_size = size_t{1} << 20;
  Status s = env.Open(dir, options);
  if (!s.ok()) return s;
  Txn txn;
  s = txn.Begin(env.get(), 0);
  MDB_dbi dbi = 0;
  if (s.ok()) s = LmdbStatus(mdb_dbi_open(txn.get(), nullptr, 0, &dbi), "opening");
  const std::string value(1000, 'v');
  for (int i = 0; s.ok() && i < 10000; ++i) {
    std::string key = "k" + std::to_string(i);
    MDB_val k{key.size(), key.data()};
    MDB_val v{value.size(), const_cast<char*>(value.data())};
    s = LmdbStatus(mdb_put(txn.get(), dbi, &k, &v, 0), "writing row " + key);
  }
  return s;
}

TEST(MapFull, AFullLmdbMapIsDescribedWithTheMapTheFileAndTheLimit) {
  TempDir dir;
  const Status full = FillUntilFull(dir.path());
  ASSERT_EQ(full.code(), Code::kFull) << full.message();
  EXPECT_TRUE(IsMapFull(full));
  MapConfig map;
  map.name = "geo";
  map.max_store_size = uint64_t{1} << 20;
  const Status said = DescribeMapFull(full, map, "the shard", dir.path() + "/data.mdb");
  EXPECT_EQ(said.code(), Code::kFull);
  EXPECT_EQ(said.message(), "map geo: the shard " + dir.path() + "/data.mdb is full: it reached max_store_size = "
                            "1MiB (1048576 bytes, the LMDB map size of the map's files) in this node's config; raise "
                            "max_store_size in [map.geo] (LMDB: " + full.message() + ")");
}

TEST(MapFull, OtherErrorsPassUnchanged) {
  MapConfig map;
  map.name = "geo";
  for (const Status& s : {Status::Ok(), LmdbStatus(MDB_TXN_FULL, "writing"), LmdbStatus(MDB_CORRUPTED, "reading"),
                          Status(Code::kFull, "disk full: /x (0 bytes free on its filesystem)")}) {
    EXPECT_FALSE(IsMapFull(s)) << s.message();
    const Status same = DescribeMapFull(s, map, "the shard", "/x/data.mdb");
    EXPECT_EQ(same.code(), s.code());
    EXPECT_EQ(same.message(), s.message());
  }
}

TEST(MapFull, SizesAreSaidAsTheConfigTakesThem) {
  EXPECT_EQ(ByteSizeText(uint64_t{1} << 20), "1MiB");
  EXPECT_EQ(ByteSizeText(uint64_t{10} << 30), "10GiB");
  EXPECT_EQ(ByteSizeText(uint64_t{3} << 40), "3TiB");
  EXPECT_EQ(ByteSizeText(1536 * 1024), "1536KiB");
  EXPECT_EQ(ByteSizeText(1048577), "1048577 bytes");
  EXPECT_EQ(ByteSizeText(0), "0 bytes");
}

}  // namespace
}  // namespace planb
