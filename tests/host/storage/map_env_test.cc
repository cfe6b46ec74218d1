#include "host/storage/map_env.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/storage/content_version.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::GetValue;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A shard of map "m" with two merged batches, its data.mdb copied alone into `copy_dir` (as a snapshot holds it).
class MapEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(StageRows(*runtime_, "m", {{"a", "1"}, {"b", "2"}}).ok());
    ASSERT_TRUE(StageRows(*runtime_, "m", {{"c", "3"}}).ok());
    MergeReport report;
    s = MergeProcessor(*runtime_).MergePending(&report);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(report.batches, 2u);
    ASSERT_TRUE(runtime_->catalog().Get("m", &plugins_).ok());
    runtime_->envs().Forget(runtime_->home().ShardPath("m"));  // closes the shard: copied below
    fs::create_directories(copy_dir());
    fs::copy_file(runtime_->home().ShardPath("m") + "/data.mdb", copy_dir() + "/data.mdb");
  }

  std::string copy_dir() const { return dir_ / "copy"; }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<const MapPlugins> plugins_;
};

// Writes `value` under `key` in the meta table of the map LMDB in `dir`.
void SetMeta(const std::string& dir, const std::shared_ptr<const MapPlugins>& plugins, const std::string& key,
             const std::string& value) {
  std::shared_ptr<MapEnv> env;
  ASSERT_TRUE(MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env).ok());
  Txn txn;
  ASSERT_TRUE(txn.Begin(env->env(), 0).ok());
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  ASSERT_EQ(mdb_put(txn.get(), env->meta(), &k, &v, 0), MDB_SUCCESS);
  ASSERT_TRUE(txn.Commit().ok());
}

// A home's shard of an older layout: the refusal says how to load the map again, as docs/maintenance.md does.
TEST_F(MapEnvTest, AShardOfAnOlderLayoutIsRefusedWithTheCommandsToLoadTheMapAgain) {
  const std::string shard = runtime_->home().ShardPath("m");
  SetMeta(shard, plugins_, "type", "state/1");
  std::shared_ptr<MapEnv> env;
  const Status s = MapEnv::Open(shard, plugins_, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), shard + ": written as map m, type state/1, scheme hashed/2 (hash_bits=64), but "
                                    "the config's [map.m] says type = state, scheme = hashed, hash_bits = 64"))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "the layout of type state changed (version 1 to 2: the file was written by an "
                                    "older planb)"))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "To load the map again: stop what serves this home (planb serve, its readers), "
                                    "move the shard away (mv " + shard + " /somewhere/m.old, kept until the reload "
                                    "is checked), then planb load the map's files again"))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "docs/maintenance.md, 'A layout changed'")) << s.message();
  EXPECT_FALSE(Contains(s.message(), "set the config back")) << s.message();  // planb changed, not the config
}

// A config that changed under a shard (hash_bits, or no scheme line: the default) is said in its own terms.
TEST_F(MapEnvTest, AConfigChangeUnderAShardIsSaidInTheConfigsTerms) {
  std::shared_ptr<const MapPlugins> narrower;
  ASSERT_TRUE(testing::CreateMapPlugins(testing::MakeMapConfig("m", "state", "", {{"hash_bits", "32"}}), &narrower)
                  .ok());
  std::shared_ptr<MapEnv> env;
  const Status s = MapEnv::Open(runtime_->home().ShardPath("m"), narrower, MapEnv::Mode::kOpenExisting,
                                MapEnv::kShardFlags, &env);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), "the config's [map.m] says type = state, scheme = hashed (the default), "
                                    "hash_bits = 32"))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "the scheme's options changed (the file's hash_bits = 64, the config's "
                                    "hash_bits = 32)"))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "or set the config back to what wrote the shard")) << s.message();
}

TEST_F(MapEnvTest, OpenExistingWorksOnAReadOnlyEnvironment) {
  std::shared_ptr<MapEnv> env;
  const Status s = MapEnv::Open(copy_dir(), plugins_, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &env);
  ASSERT_TRUE(s.ok()) << s.message();
  std::string value;
  EXPECT_EQ(GetValue(*env, "b", &value), Code::kOk);
  EXPECT_EQ(value, "2");
  EXPECT_EQ(GetValue(*env, "c", &value), Code::kOk);
  EXPECT_EQ(value, "3");

  // meta() is the table the content version lives in, readable in a read-only environment.
  Txn txn;
  ASSERT_TRUE(txn.Begin(env->env(), MDB_RDONLY).ok());
  ContentVersion version;
  ASSERT_TRUE(ReadContentVersion(txn.get(), env->meta(), &version).ok());
  EXPECT_EQ(version.batches, 2u);
  txn.Abort();

  // MDB_NOLOCK: no lock file appears, and nothing may be written.
  EXPECT_FALSE(fs::exists(copy_dir() + "/lock.mdb"));
  Txn write;
  EXPECT_FALSE(write.Begin(env->env(), 0).ok());
}

TEST_F(MapEnvTest, OpenExistingOnAReadOnlyEnvironmentStillChecksTheLayout) {
  std::shared_ptr<const MapPlugins> direct;
  ASSERT_TRUE(testing::CreateMapPlugins(testing::MakeMapConfig("m", "state", "direct"), &direct).ok());
  std::shared_ptr<MapEnv> env;
  const Status s = MapEnv::Open(copy_dir(), direct, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &env);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), copy_dir())) << s.message();
  EXPECT_EQ(env, nullptr);
}

// A shard written by an older version of its scheme (hashed/1 stored each key's length in 4 bytes, version 2 in
// a varint) is refused at open, naming both versions, and is left as it was.
TEST_F(MapEnvTest, RefusesAShardWrittenByAnOlderVersionOfItsScheme) {
  {
    std::shared_ptr<MapEnv> env;
    ASSERT_TRUE(MapEnv::Open(copy_dir(), plugins_, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env).ok());
    Txn txn;
    ASSERT_TRUE(txn.Begin(env->env(), 0).ok());
    MDB_val k{6, const_cast<char*>("scheme")};
    MDB_val v{8, const_cast<char*>("hashed/1")};
    ASSERT_EQ(mdb_put(txn.get(), env->meta(), &k, &v, 0), MDB_SUCCESS);
    ASSERT_TRUE(txn.Commit().ok());
  }
  const auto size_before = fs::file_size(copy_dir() + "/data.mdb");
  std::shared_ptr<MapEnv> env;
  const Status s = MapEnv::Open(copy_dir(), plugins_, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), "written as map m, type state/2, scheme hashed/1")) << s.message();
  // In the config's terms (issue 40): the config says `hashed`; the version is this planb's, said apart.
  EXPECT_TRUE(Contains(s.message(), "but the config's [map.m] says type = state, scheme = hashed, hash_bits = 64 "
                                    "(this planb writes map m, type state/2, scheme hashed/2 (hash_bits=64)): the "
                                    "layout of scheme hashed changed (version 1 to 2: the file was written by an "
                                    "older planb)"))
      << s.message();
  // Not a shard of a home (a copy, as a snapshot or batch is): where it came from, not how to reload.
  EXPECT_TRUE(Contains(s.message(), "written by a node with another planb version or config")) << s.message();
  EXPECT_FALSE(Contains(s.message(), "To load the map again")) << s.message();
  EXPECT_EQ(env, nullptr);
  EXPECT_EQ(fs::file_size(copy_dir() + "/data.mdb"), size_before);

  // Its meta still names the version that wrote it: nothing was rewritten.
  MDB_env* raw = nullptr;
  ASSERT_EQ(mdb_env_create(&raw), MDB_SUCCESS);
  ASSERT_EQ(mdb_env_set_maxdbs(raw, 16), MDB_SUCCESS);
  ASSERT_EQ(mdb_env_open(raw, copy_dir().c_str(), MDB_RDONLY | MDB_NOLOCK, 0644), MDB_SUCCESS);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(raw, nullptr, MDB_RDONLY, &txn), MDB_SUCCESS);
  MDB_dbi meta = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), MDB_SUCCESS);
  MDB_val k{6, const_cast<char*>("scheme")};
  MDB_val v;
  ASSERT_EQ(mdb_get(txn, meta, &k, &v), MDB_SUCCESS);
  EXPECT_EQ(Bytes(v).view(), "hashed/1");
  mdb_txn_abort(txn);
  mdb_env_close(raw);
}

// A map written with one scheme's options is refused under the same scheme with other options (its Layout()),
// value_dedup included.
TEST(MapEnvLayout, SchemesRefuseAShardWrittenWithOtherOptions) {
  const struct {
    const char* scheme;
    std::vector<std::pair<std::string, std::string>> written;
    std::vector<std::pair<std::string, std::string>> opened;
  } kCases[] = {
      {"hybrid", {}, {{"direct_max", "16"}}},
      {"lookup_table", {}, {{"hash_bits", "8"}}},
      {"variable", {{"direct_max", "8"}}, {}},
      // value_dedup either way, on every scheme: rows hold references in one layout and values in the other.
      {"hashed", {{"value_dedup", "true"}}, {}},
      {"direct", {}, {{"value_dedup", "true"}}},
      {"hybrid", {{"value_dedup", "true"}}, {{"value_dedup", "false"}}},
      {"lookup_table", {}, {{"value_dedup", "true"}}},
      {"variable", {{"value_dedup", "true"}}, {}},
  };
  for (const auto& c : kCases) {
    TempDir dir;
    std::shared_ptr<const MapPlugins> written;
    std::shared_ptr<const MapPlugins> opened;
    ASSERT_TRUE(testing::CreateMapPlugins(testing::MakeMapConfig("m", "state", c.scheme, c.written), &written).ok());
    ASSERT_TRUE(testing::CreateMapPlugins(testing::MakeMapConfig("m", "state", c.scheme, c.opened), &opened).ok());
    std::shared_ptr<MapEnv> env;
    ASSERT_TRUE(testing::CreateMapEnv(dir / "m", written, &env).ok());
    ASSERT_TRUE(testing::PutRows(env, {{"a-key-long-enough-for-an-id-or-a-hash", "1"}}).ok());
    env.reset();
    const Status s = MapEnv::Open(dir / "m", opened, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.scheme << ": " << s.message();
    EXPECT_EQ(env, nullptr) << c.scheme;
    ASSERT_TRUE(MapEnv::Open(dir / "m", written, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env).ok());
    std::string value;
    EXPECT_EQ(GetValue(*env, "a-key-long-enough-for-an-id-or-a-hash", &value), Code::kOk) << c.scheme;
  }
}

TEST_F(MapEnvTest, OpenBatchesTableMakesTheTableInAWriteTransaction) {
  // A batch as StreamWriter leaves it has no batches table: the first write transaction that records one makes it.
  std::shared_ptr<MapEnv> batch;
  Status s = testing::CreateMapEnv(dir_ / "batch", plugins_, &batch);
  ASSERT_TRUE(s.ok()) << s.message();
  Txn txn;
  ASSERT_TRUE(txn.Begin(batch->env(), MDB_RDONLY).ok());
  MDB_dbi dbi = 0;
  EXPECT_EQ(txn.OpenDbi(kBatchesTableName, 0, &dbi).code(), Code::kNotFound);
  txn.Abort();

  ASSERT_TRUE(txn.Begin(batch->env(), 0).ok());
  MDB_dbi batches = 0;
  s = batch->OpenBatchesTable(txn.get(), &batches);
  ASSERT_TRUE(s.ok()) << s.message();
  bool counted = false;
  ASSERT_TRUE(RecordMergedBatch(txn.get(), batch->meta(), batches, "n/1", 1, &counted).ok());
  ASSERT_TRUE(txn.Commit().ok());

  ASSERT_TRUE(txn.Begin(batch->env(), MDB_RDONLY).ok());
  ContentVersion version;
  ASSERT_TRUE(ReadContentVersion(txn.get(), batch->meta(), &version).ok());
  EXPECT_EQ(version.batches, 1u);
  Bytes value;
  EXPECT_TRUE(txn.Get(batches, Bytes(std::string_view("n/1")), &value));
}

}  // namespace
}  // namespace planb
