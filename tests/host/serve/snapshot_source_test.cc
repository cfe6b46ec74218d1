#include "host/serve/snapshot_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>
#include <zip.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/transfer/batch_zip.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::DumpedRow;
using ::planb::testing::DumpMap;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ReadFile;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Names in `dir`, sorted.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

class SnapshotSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed") + StateMapSection("d", "direct"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    source_ = std::make_unique<SnapshotSource>(*runtime_);
    ASSERT_TRUE(source_->Clear().ok());
    AddBatch(0, 200);
  }

  // Merges rows key-<first>..key-<first+count-1> into m's shard as one batch.
  void AddBatch(int first, int count) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (int i = first; i < first + count; ++i)
      rows.emplace_back("key-" + std::to_string(i), "value " + std::to_string(i));
    ASSERT_TRUE(StageRows(*runtime_, "m", rows).ok());
    MergeReport report;
    const Status s = MergeProcessor(*runtime_).MergePending(&report);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> Shard() {
    std::shared_ptr<MapEnv> shard;
    EXPECT_TRUE(runtime_->OpenShard("m", &shard).ok());
    return shard;
  }

  ContentVersion ShardVersion() {
    Txn txn;
    EXPECT_TRUE(txn.Begin(Shard()->env(), MDB_RDONLY).ok());
    ContentVersion version;
    EXPECT_TRUE(ReadContentVersion(txn.get(), Shard()->meta(), &version).ok());
    return version;
  }

  PreparedSnapshot Prepare(const ContentVersion& have = {}) {
    PreparedSnapshot prepared;
    const Status s = source_->Prepare("m", have, &prepared);
    EXPECT_TRUE(s.ok()) << s.message();
    return prepared;
  }

  // The zip's single map, unzipped into a fresh directory; its batch id in `batch_id`.
  std::shared_ptr<MapEnv> Unzip(const PreparedSnapshot& prepared, std::string* batch_id) {
    const std::string dest = dir_ / ("unzipped-" + std::to_string(++unzips_));
    std::vector<std::string> maps;
    Status s = UnzipBatch(prepared.zip_path, dest, UnzipLimits(), &maps, batch_id);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(maps, std::vector<std::string>{"m"});
    std::shared_ptr<const MapPlugins> plugins;
    EXPECT_TRUE(runtime_->catalog().Get("m", &plugins).ok());
    std::shared_ptr<MapEnv> env;
    s = MapEnv::Open(dest + "/m", plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  // Checks the zip of `prepared` against the shard now: the batch id names the node, the map and the version, the
  // rows are the shard's, and the copy's own content version is the one offered. Returns the rows copied.
  size_t ExpectTheShardAsOffered(const PreparedSnapshot& prepared) {
    std::string batch_id;
    std::shared_ptr<MapEnv> copy = Unzip(prepared, &batch_id);
    if (copy == nullptr) {
      ADD_FAILURE() << "the zip does not open as a map";
      return 0;
    }
    EXPECT_EQ(batch_id, "snapshot/" + runtime_->config().cluster.node_name + "/m/" +
                            std::to_string(prepared.version.batches));
    std::vector<DumpedRow> copied, original;
    EXPECT_TRUE(DumpMap(*copy, &copied).ok());
    EXPECT_TRUE(DumpMap(*Shard(), &original).ok());
    EXPECT_EQ(copied, original);
    Txn txn;
    EXPECT_TRUE(txn.Begin(copy->env(), MDB_RDONLY).ok());
    ContentVersion in_copy;
    EXPECT_TRUE(ReadContentVersion(txn.get(), copy->meta(), &in_copy).ok());
    EXPECT_EQ(in_copy, prepared.version);
    return copied.size();
  }

  std::string outgoing() const { return runtime_->home().outgoing(); }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<SnapshotSource> source_;
  int unzips_ = 0;
};

TEST_F(SnapshotSourceTest, ZipsACopyOfTheShardWithItsVersion) {
  const PreparedSnapshot prepared = Prepare();
  EXPECT_FALSE(prepared.not_modified);
  EXPECT_EQ(prepared.version, ShardVersion());
  EXPECT_EQ(prepared.version.batches, 1u);
  EXPECT_EQ(fs::path(prepared.zip_path).parent_path(), fs::path(outgoing()));
  EXPECT_GT(prepared.create_time_ms, 0);
  const std::string bytes = ReadFile(prepared.zip_path);
  EXPECT_EQ(prepared.size, bytes.size());
  EXPECT_EQ(prepared.checksum, XXH3_64bits(bytes.data(), bytes.size()));
  // Only the zip stays behind: the copy it was made from is gone.
  EXPECT_EQ(Entries(outgoing()), std::vector<std::string>{fs::path(prepared.zip_path).filename()});

  EXPECT_EQ(ExpectTheShardAsOffered(prepared), 200u);
}

struct ZipEntry {
  int method = -1;
  uint64_t size = 0;  // unpacked
};

// Each entry's compression method and unpacked size in the zip at `path`, by name.
std::map<std::string, ZipEntry> ZipEntries(const std::string& path) {
  std::map<std::string, ZipEntry> methods;
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY, &error);
  EXPECT_NE(zip, nullptr) << path;
  if (zip == nullptr) return methods;
  for (zip_int64_t i = 0; i < zip_get_num_entries(zip, 0); ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) == 0) methods[st.name] = {st.comp_method, st.size};
  }
  zip_discard(zip);
  return methods;
}

TEST_F(SnapshotSourceTest, EveryWayOfMakingGivesTheShardsRowsStoredOrDeflatedAsAsked) {
  AddBatch(100, 300);  // overwrites half the first batch's keys: the shard has free pages to leave out
  std::vector<DumpedRow> original;
  ASSERT_TRUE(DumpMap(*Shard(), &original).ok());
  std::map<double, uint64_t> copy_bytes;  // by compact_above_free_share
  for (const bool deflate : {false, true}) {
    for (const double compact_above : {0.0, 0.10, 2.0}) {
      SCOPED_TRACE(std::string(deflate ? "deflate" : "stored") + ", compacting above a free share of " +
                   std::to_string(compact_above));
      SnapshotSource source(*runtime_, SnapshotMaking{deflate, compact_above});
      PreparedSnapshot prepared;
      const Status s = source.Prepare("m", ContentVersion(), &prepared);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_EQ(prepared.version, ShardVersion());
      const std::map<std::string, ZipEntry> entries = ZipEntries(prepared.zip_path);
      ASSERT_EQ(entries.count("m/data.mdb"), 1u);
      EXPECT_EQ(entries.at("m/data.mdb").method, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE);
      copy_bytes[compact_above] = entries.at("m/data.mdb").size;
      std::string batch_id;
      std::shared_ptr<MapEnv> copy = Unzip(prepared, &batch_id);
      ASSERT_NE(copy, nullptr);
      std::vector<DumpedRow> copied;
      ASSERT_TRUE(DumpMap(*copy, &copied).ok());
      EXPECT_EQ(copied.size(), 400u);
      EXPECT_EQ(copied, original);
      fs::remove(prepared.zip_path);
    }
  }
  // The overwrites left well over a tenth of the shard's pages free: the default compacts, as asked always.
  EXPECT_LT(copy_bytes[0.0], copy_bytes[2.0]);
  EXPECT_EQ(copy_bytes[0.10], copy_bytes[0.0]);
}

TEST_F(SnapshotSourceTest, TheNodesConfigChoosesTheCompression) {
  EXPECT_EQ(ZipEntries(Prepare().zip_path).at("m/data.mdb").method, ZIP_CM_STORE);  // the default: none
  TempDir other;
  std::unique_ptr<Runtime> runtime;
  const Status s =
      OpenTestRuntime(other.path(), "snapshot_compression = deflate\n" + StateMapSection("m", "hashed"), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(StageRows(*runtime, "m", {{"k", "v"}}).ok());
  MergeReport report;
  ASSERT_TRUE(MergeProcessor(*runtime).MergePending(&report).ok());
  SnapshotSource source(*runtime);
  PreparedSnapshot prepared;
  ASSERT_TRUE(source.Prepare("m", ContentVersion(), &prepared).ok());
  EXPECT_EQ(ZipEntries(prepared.zip_path).at("m/data.mdb").method, ZIP_CM_DEFLATE);
}

TEST_F(SnapshotSourceTest, AnUpToDateRequesterGetsNotModifiedWithoutACopy) {
  const PreparedSnapshot prepared = Prepare(ShardVersion());
  EXPECT_TRUE(prepared.not_modified);
  EXPECT_EQ(prepared.version, ShardVersion());
  EXPECT_TRUE(prepared.zip_path.empty());
  EXPECT_EQ(prepared.size, 0u);
  EXPECT_TRUE(Entries(outgoing()).empty());
}

TEST_F(SnapshotSourceTest, TheZipIsReusedWhileTheShardIsUnchanged) {
  const PreparedSnapshot first = Prepare();
  const PreparedSnapshot again = Prepare();
  const PreparedSnapshot other_have = Prepare({5, 5});
  EXPECT_EQ(again.zip_path, first.zip_path);
  EXPECT_EQ(again.checksum, first.checksum);
  EXPECT_EQ(again.create_time_ms, first.create_time_ms);
  EXPECT_EQ(other_have.zip_path, first.zip_path);
  EXPECT_EQ(Entries(outgoing()).size(), 1u);
}

TEST_F(SnapshotSourceTest, ANewerShardGetsANewZipAndTheOneItReplacedIsUnlinkedNextTime) {
  const PreparedSnapshot first = Prepare();
  // A reader fetching the first zip holds it open; unlinking must not take its bytes away.
  const int fd = ::open(first.zip_path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  AddBatch(150, 100);
  const PreparedSnapshot second = Prepare(first.version);
  EXPECT_FALSE(second.not_modified);
  EXPECT_NE(second.zip_path, first.zip_path);
  EXPECT_EQ(second.version, ShardVersion());
  EXPECT_EQ(second.version.batches, 2u);
  EXPECT_NE(second.version, first.version);
  // The replaced zip stays one generation (an offer of it may be on its way to the receiver); the next
  // replacement unlinks it.
  EXPECT_TRUE(fs::exists(first.zip_path));
  AddBatch(250, 10);
  const PreparedSnapshot third = Prepare(second.version);
  EXPECT_EQ(third.version.batches, 3u);
  EXPECT_FALSE(fs::exists(first.zip_path));
  EXPECT_TRUE(fs::exists(second.zip_path));
  std::vector<std::string> expected = {fs::path(second.zip_path).filename(), fs::path(third.zip_path).filename()};
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> entries = Entries(outgoing());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, expected);
  std::string held(first.size, '\0');
  EXPECT_EQ(::pread(fd, held.data(), held.size(), 0), static_cast<ssize_t>(first.size));
  EXPECT_EQ(XXH3_64bits(held.data(), held.size()), first.checksum);
  ::close(fd);

  std::string batch_id;
  std::shared_ptr<MapEnv> copy = Unzip(second, &batch_id);
  ASSERT_NE(copy, nullptr);
  std::vector<DumpedRow> rows;
  ASSERT_TRUE(DumpMap(*copy, &rows).ok());
  EXPECT_EQ(rows.size(), 250u);
}

// The copy takes its own read transaction: a merge's write transaction open meanwhile neither blocks it nor
// shows in it, and the version offered is the copy's, not the one the merge is about to commit.
TEST_F(SnapshotSourceTest, ACopyWhileAMergeIsOpenHasTheVersionBeforeTheMerge) {
  const ContentVersion before = ShardVersion();
  std::shared_ptr<MapEnv> shard = Shard();
  std::mutex mu;
  std::condition_variable cv;
  bool open = false, go = false, committed = false;
  Status merge_status;
  std::thread merge([&] {
    Txn txn;
    Status s = txn.Begin(shard->env(), 0);
    MDB_dbi batches = 0;
    if (s.ok()) s = shard->OpenBatchesTable(txn.get(), &batches);
    bool counted = false;
    if (s.ok()) s = RecordMergedBatch(txn.get(), shard->meta(), batches, "node9/concurrent", 1, &counted);
    {
      std::unique_lock<std::mutex> lock(mu);
      open = true;
      cv.notify_all();
      cv.wait(lock, [&] { return go; });
    }
    if (s.ok()) s = txn.Commit();
    std::lock_guard<std::mutex> lock(mu);
    merge_status = s;
    committed = true;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return open; }));
  }
  const PreparedSnapshot during = Prepare();
  {
    std::unique_lock<std::mutex> lock(mu);
    go = true;
    cv.notify_all();
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return committed; }));
  }
  merge.join();
  ASSERT_TRUE(merge_status.ok()) << merge_status.message();
  EXPECT_EQ(during.version, before);

  const PreparedSnapshot after = Prepare(during.version);
  EXPECT_FALSE(after.not_modified);
  EXPECT_EQ(after.version.batches, before.batches + 1);
  EXPECT_EQ(after.version, ShardVersion());
  EXPECT_NE(after.zip_path, during.zip_path);
}

// The streamed copy's version is read before it: a merge committing before the copy ended makes it unusable. It is
// then streamed again, and after a second such merge copied into a file whose version is read from the copy.
TEST_F(SnapshotSourceTest, MergesDuringAStreamedCopyAreNeverOfferedUnderTheVersionBeforeThem) {
  for (const int merges_during : {1, 2}) {
    SCOPED_TRACE(std::to_string(merges_during) + " merge(s) during streamed copies");
    int copies = 0;
    int next_key = 10000 * merges_during;
    SnapshotMaking making;
    making.after_streamed_copy = [&] {
      if (++copies <= merges_during) AddBatch(next_key++, 1);
    };
    const ContentVersion before = ShardVersion();
    SnapshotSource source(*runtime_, making);
    PreparedSnapshot prepared;
    const Status s = source.Prepare("m", ContentVersion(), &prepared);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(copies, std::min(merges_during + 1, 2));  // a second merge leaves only the file copy
    EXPECT_EQ(prepared.version, ShardVersion());
    EXPECT_EQ(prepared.version.batches, before.batches + merges_during);
    EXPECT_GT(ExpectTheShardAsOffered(prepared), 200u);
    // The discarded zips and the scratch copy are gone.
    EXPECT_EQ(Entries(outgoing()), std::vector<std::string>{fs::path(prepared.zip_path).filename()});
    fs::remove(prepared.zip_path);
  }
}

TEST_F(SnapshotSourceTest, UnknownMapOrMapWithoutShardIsNotFoundNamingTheMap) {
  PreparedSnapshot prepared;
  Status s = source_->Prepare("nosuch", {}, &prepared);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "map 'nosuch' is not in the config")) << s.message();
  s = source_->Prepare("D", {}, &prepared);  // configured, nothing merged
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "nothing merged into d on this node yet");
  EXPECT_TRUE(Entries(outgoing()).empty());
}

TEST_F(SnapshotSourceTest, ClearEmptiesOutgoing) {
  const PreparedSnapshot first = Prepare();
  testing::WriteFile(outgoing() + "/.m-1-1/m/data.mdb", "left by a crash");
  testing::WriteFile(outgoing() + "/m-1-1.zip", "old zip");
  ASSERT_TRUE(source_->Clear().ok());
  EXPECT_TRUE(Entries(outgoing()).empty());
  // Forgotten too: the next request makes a new zip.
  const PreparedSnapshot next = Prepare();
  EXPECT_TRUE(fs::exists(next.zip_path));
  EXPECT_EQ(next.version, first.version);
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// Snapshots are trimmed as they are made: the map's retention and condensation are applied to the copy (the
// shard keeps every row until maintenance runs), so readers download only what maintenance would keep.
TEST(SnapshotSourceTrim, AppliesTheMapsRetentionAndCondensationToTheCopyOnly) {
  TempDir dir;
  const std::string config = "[map.tm]\ntype = temporal\nscheme = direct\nretain_for = 3650d\ncondense = true\n";
  testing::WriteFile(dir / "planb.ini", "home = " + (dir / "home") + "\n" + config);
  std::string body;
  auto ref = [](const std::string& time, const std::string& key, const std::string& value) {
    return "<reference><map>tm</map><time>" + time + "</time><key>" + key + "</key><value>" + value +
           "</value></reference>\n";
  };
  body += ref("1990-01-01T00:00:00Z", "k", "too old");  // past retention
  body += ref("2020-01-01T00:00:00Z", "k", "a");
  body += ref("2021-01-01T00:00:00Z", "k", "a");  // a repeated confirmation: condensed
  body += ref("2022-01-01T00:00:00Z", "k", "b");
  body += ref("2999-01-01T00:00:00Z", "k", "b");  // the future: not before the cut, kept
  testing::WriteFile(dir / "a.xml", "<referenceData xmlns=\"reference-data:2\">\n" + body + "</referenceData>\n");
  const testing::ProcessResult r = testing::RunPlanb({"--config", dir / "planb.ini", "load", dir / "a.xml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::unique_ptr<Runtime> runtime;
  ASSERT_TRUE(OpenTestRuntime(dir.path(), "home = " + (dir / "home") + "\n" + config, &runtime).ok());
  SnapshotSource source(*runtime);
  ASSERT_TRUE(source.Clear().ok());
  PreparedSnapshot prepared;
  Status s = source.Prepare("tm", ContentVersion(), &prepared);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::string dest = dir / "unzipped";
  std::vector<std::string> maps;
  s = UnzipBatch(prepared.zip_path, dest, UnzipLimits(), &maps);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(runtime->catalog().Get("tm", &plugins).ok());
  std::shared_ptr<MapEnv> copy;
  s = MapEnv::Open(dest + "/tm", plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags, &copy);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<DumpedRow> copied, shard_rows;
  ASSERT_TRUE(DumpMap(*copy, &copied).ok());
  std::vector<std::string> values;
  for (const DumpedRow& row : copied) values.push_back(row.value);
  EXPECT_EQ(values, (std::vector<std::string>{"a", "b", "b"}));
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("tm", &shard).ok());
  ASSERT_TRUE(DumpMap(*shard, &shard_rows).ok());
  EXPECT_EQ(shard_rows.size(), 5u);  // the shard itself waits for maintenance
  EXPECT_EQ(prepared.version.batches, 1u);
  EXPECT_EQ(Entries(runtime->home().outgoing()), std::vector<std::string>{fs::path(prepared.zip_path).filename()});
}

}  // namespace
}  // namespace planb
