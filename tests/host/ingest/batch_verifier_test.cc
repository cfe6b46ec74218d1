#include "host/ingest/batch_verifier.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "host/ingest/stream_writer.h"
#include "support/map_fixture.h"
#include "support/ranged_fixture.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::RangeRecord;
using ::planb::testing::ReadFile;
using ::planb::testing::SessionEvent;
using ::planb::testing::Span;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;
using ::planb::testing::TemporalEvent;
using ::planb::testing::ToRecord;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr size_t kPage = 4096;

// lmdb's meta page (both copies, pages 0 and 1): the MDB_page header (16 bytes), then MDB_meta: magic u32,
// version u32, address u64, mapsize u64, then MDB_db[2] (free, main) of 48 bytes each: pad u32, flags u16,
// depth u16, branch_pages u64, leaf_pages u64, overflow_pages u64, entries u64, root u64.
constexpr size_t kMetaMagic = 16;
constexpr size_t kMetaMapSize = 32;
constexpr size_t kMainLeafPages = 88 + 16;
constexpr size_t kMainEntries = 88 + 32;

void PutU64(std::string* data, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i) (*data)[at + i] = static_cast<char>(value >> (8 * i));
}

// Writes `value` at `offset` of both meta pages of `file`, as a forged file would carry it.
void PatchBothMetas(const std::string& file, size_t offset, uint64_t value) {
  std::string data = ReadFile(file);
  ASSERT_GT(data.size(), 2 * kPage);
  for (size_t page : {size_t{0}, kPage}) {
    ASSERT_EQ(static_cast<uint8_t>(data[page + kMetaMagic]), 0xde) << "not an LMDB meta page at " << page;
    PutU64(&data, page + offset, value);
  }
  WriteFile(file, data);
}

// Runs `edit` on the data table of the batch map `map_dir` in one raw LMDB write transaction, as a sender
// that writes its own rows could.
void EditDataTable(const std::string& map_dir, const std::function<void(MDB_txn*, MDB_dbi)>& edit) {
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 16), 0);
  ASSERT_EQ(mdb_env_set_mapsize(env, size_t{1} << 30), 0);
  ASSERT_EQ(mdb_env_open(env, map_dir.c_str(), 0, 0644), 0) << map_dir;
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi dbi = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "data", 0, &dbi), 0);
  edit(txn, dbi);
  EXPECT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

// Row `number` (from 1, LMDB order) of `dbi` as (key, value).
std::pair<std::string, std::string> RowAt(MDB_txn* txn, MDB_dbi dbi, int number) {
  MDB_cursor* cursor = nullptr;
  EXPECT_EQ(mdb_cursor_open(txn, dbi, &cursor), 0);
  MDB_val k, v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  for (int i = 1; i < number && rc == 0; ++i) rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
  EXPECT_EQ(rc, 0) << "no row " << number;
  std::pair<std::string, std::string> row;
  if (rc == 0) {
    row = {std::string(static_cast<const char*>(k.mv_data), k.mv_size),
           std::string(static_cast<const char*>(v.mv_data), v.mv_size)};
  }
  mdb_cursor_close(cursor);
  return row;
}

void Put(MDB_txn* txn, MDB_dbi dbi, const std::string& key, const std::string& value) {
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
}

// Sets PLANB_FAULT for one test.
class FaultGuard {
 public:
  explicit FaultGuard(const char* point) { ::setenv("PLANB_FAULT", point, 1); }
  ~FaultGuard() { ::unsetenv("PLANB_FAULT"); }
};

std::string TypedSection(const std::string& name, const std::string& type, const std::string& scheme) {
  return "[map." + name + "]\ntype = " + type + "\n" + (scheme.empty() ? "" : "scheme = " + scheme + "\n") +
         "max_store_size = 1GiB\n";
}

// One map per built-in store type and key scheme, and each map's type.
const std::vector<std::pair<std::string, std::string>> kTypedMaps = {
    {"st_hashed", "state"}, {"st_direct", "state"},     {"tm_hashed", "temporal"}, {"tm_direct", "temporal"},
    {"rg", "ranged"},       {"trg", "temporal_ranged"}, {"ss_hashed", "session"},  {"ss_direct", "session"}};

std::string TypedConfig() {
  std::string config;
  for (const auto& [map, type] : kTypedMaps) {
    const bool ranged = type == "ranged" || type == "temporal_ranged";
    const std::string scheme = ranged ? "" : map.substr(map.size() - 6);
    config += TypedSection(map, type, scheme);
  }
  return config;
}

// The processes whose parent is `parent` (from /proc/<pid>/stat), zombies included.
std::set<pid_t> ChildrenOf(pid_t parent) {
  std::set<pid_t> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t end_of_name = stat.rfind(')');
    if (end_of_name == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + end_of_name + 1, " %c %ld", &state, &ppid) == 2 && ppid == parent) {
      children.insert(static_cast<pid_t>(std::stol(name)));
    }
  }
  return children;
}

// The descriptors open in `pid`; false when /proc does not show them (not ours to read, or gone).
bool OpenFds(pid_t pid, std::set<int>* fds) {
  fds->clear();
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return false;
  while (const struct dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') fds->insert(std::atoi(entry->d_name));
  }
  ::closedir(dir);
  return true;
}

class BatchVerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_ / "node", StateMapSection("m", "hashed") + StateMapSection("d", "direct"), &node_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A finished StreamWriter directory written under `config` by `fill`.
  std::string WriteStream(const std::string& config, const std::function<void(StreamWriter*)>& fill) {
    const std::string where = dir_ / ("writer" + std::to_string(batches_++));
    std::unique_ptr<Runtime> runtime;
    const Status opened = OpenTestRuntime(where, config, &runtime);
    EXPECT_TRUE(opened.ok()) << opened.message();
    if (!opened.ok()) return "";
    const std::string stream = where + "/stream";
    StreamWriter writer(runtime->catalog(), stream);
    fill(&writer);
    const Status finished = writer.Finish();
    EXPECT_TRUE(finished.ok()) << finished.message();
    return stream;
  }

  // A finished StreamWriter directory written under `config` with `rows` State rows per map.
  std::string WriteBatch(const std::string& config, const std::vector<std::string>& maps, int rows) {
    return WriteStream(config, [&](StreamWriter* writer) {
      for (const std::string& map : maps) {
        for (int i = 0; i < rows; ++i) {
          const std::string key = "key-" + std::to_string(i);
          const std::string value = "value of row " + std::to_string(i) + " in " + map;
          const Status s = writer->Add(map, StateRecord(key, value));
          EXPECT_TRUE(s.ok()) << s.message();
        }
      }
    });
  }

  std::string Zip(const std::string& batch_dir) {
    const std::string zip = dir_ / ("batch" + std::to_string(batches_++) + ".zip");
    const Status s = ZipBatch(batch_dir, zip, ZipOptions{/*compress=*/true, /*batch_id=*/"test/" + zip});
    EXPECT_TRUE(s.ok()) << s.message();
    return zip;
  }

  Status Verify(const std::string& zip, const VerifyOptions& options = VerifyOptions()) {
    const Status s = VerifyBatch(*node_, zip, Scratch(), UnzipLimits(), options);
    EXPECT_FALSE(fs::exists(Scratch())) << s.message();
    return s;
  }

  std::string Scratch() const { return dir_ / "scratch/verify"; }
  std::string NodeConfig() const { return StateMapSection("m", "hashed") + StateMapSection("d", "direct"); }

  TempDir dir_;
  std::unique_ptr<Runtime> node_;
  int batches_ = 0;
};

TEST_F(BatchVerifierTest, SoundBatchPasses) {
  const Status s = Verify(Zip(WriteBatch(NodeConfig(), {"m", "d"}, 5000)));
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(BatchVerifierTest, EmptyBatchPasses) {
  const Status s = Verify(Zip(WriteBatch(NodeConfig(), {}, 0)));
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(BatchVerifierTest, RefusesMapNotInConfig) {
  const std::string zip = Zip(WriteBatch(NodeConfig() + StateMapSection("extra", "hashed"), {"m", "extra"}, 10));
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'extra' is not configured on this node")) << s.message();
}

TEST_F(BatchVerifierTest, RefusesMapWrittenWithAnotherLayout) {
  // Same map name, other key scheme: the meta the batch carries does not match this node's config.
  const std::string zip = Zip(WriteBatch(StateMapSection("m", "direct"), {"m"}, 10));
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': written as")) << s.message();
  EXPECT_FALSE(Contains(s.message(), Scratch())) << s.message();
}

TEST_F(BatchVerifierTest, RefusesRandomBytes) {
  const std::string batch = WriteBatch(NodeConfig(), {"d", "m"}, 10);
  std::mt19937 random(7);
  std::string junk(64 * 1024, '\0');
  for (char& c : junk) c = static_cast<char>(random());
  WriteFile(batch + "/m/data.mdb", junk);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': not an LMDB file")) << s.message();
}

TEST_F(BatchVerifierTest, RefusesTruncatedFileWithoutCrashing) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 20000);
  const std::string data = ReadFile(batch + "/m/data.mdb");
  ASSERT_GT(data.size(), 40 * kPage);
  WriteFile(batch + "/m/data.mdb", data.substr(0, data.size() / 2));
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': LMDB file is truncated")) << s.message();
}

TEST_F(BatchVerifierTest, RefusesGarbagePagesWithoutCrashing) {
  const std::string batch = WriteBatch(NodeConfig(), {"d", "m"}, 20000);
  std::string data = ReadFile(batch + "/m/data.mdb");
  ASSERT_GT(data.size(), 40 * kPage);
  // Several pages in the middle: data table leaves and branches (the few free pages of a fresh batch sit low).
  const size_t middle = data.size() / kPage / 2;
  for (size_t i = middle * kPage; i < (middle + 4) * kPage; ++i) data[i] = static_cast<char>(0xab ^ (i * 31));
  WriteFile(batch + "/m/data.mdb", data);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': ")) << s.message();
}

// LMDB trusts a node's size: a leaf whose first value claims 2 GiB makes the walk read past the mapping. The
// verifier's child dies of the signal; the test process does not.
TEST_F(BatchVerifierTest, ReportsCrashingFileAsCorrupt) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 20000);
  std::string data = ReadFile(batch + "/m/data.mdb");
  ASSERT_GT(data.size(), 40 * kPage);
  // Page header (lmdb's MDB_page): pgno u64, pad u16, flags u16, lower u16, upper u16, then node offsets (u16).
  // A leaf in the second half of a fresh batch belongs to the data table (its few free pages sit low).
  auto u16 = [&](size_t at) {
    return static_cast<uint16_t>(static_cast<uint8_t>(data[at]) | uint8_t(data[at + 1]) << 8);
  };
  size_t leaf = 0;
  for (size_t page = data.size() / kPage / 2; page < data.size() / kPage && leaf == 0; ++page) {
    if (u16(page * kPage + 10) == 0x02 && u16(page * kPage + 12) > 16) leaf = page * kPage;
  }
  ASSERT_NE(leaf, 0u);
  const size_t node = leaf + u16(leaf + 16);
  data[node] = data[node + 1] = static_cast<char>(0xff);  // data size, low 16 bits
  data[node + 2] = static_cast<char>(0xff);               // high 16 bits: 0x7fffffff
  data[node + 3] = 0x7f;
  WriteFile(batch + "/m/data.mdb", data);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': LMDB file is corrupt (verifier killed by signal "))
      << s.message();
}

TEST_F(BatchVerifierTest, RefusesBrokenZipRules) {
  const std::string zip = dir_ / "not.zip";
  WriteFile(zip, "not a zip");
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": not a zip archive")) << s.message();
}

TEST_F(BatchVerifierTest, LeavesExistingScratchAlone) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  WriteFile(Scratch() + "/mine", "keep");
  const Status s = VerifyBatch(*node_, zip, Scratch(), UnzipLimits());
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), Scratch() + ": already exists")) << s.message();
  EXPECT_EQ(ReadFile(Scratch() + "/mine"), "keep");
}

// A client allowed some maps only (its [client.NAME] maps): a batch naming another is refused before its files
// are verified; one within them passes.
TEST_F(BatchVerifierTest, RefusesAMapOutsideTheSendersScope) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"d", "m"}, 10));
  Status s = VerifyBatch(*node_, zip, Scratch(), UnzipLimits(), VerifyOptions(), MapScope{std::set<std::string>{"d"}});
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.message();
  EXPECT_EQ(s.message(), "not authorised for upload on m");
  EXPECT_FALSE(std::filesystem::exists(Scratch()));
  s = VerifyBatch(*node_, zip, Scratch(), UnzipLimits(), VerifyOptions(), MapScope{std::set<std::string>{"d", "m"}});
  EXPECT_TRUE(s.ok()) << s.message();
}

// The scope is checked from the zip's directory, before anything is inflated or any room is asked for: a small
// zip declaring gigabytes of a map the sender may not write used to be inflated first (and here, where no disk
// could ever be enough, it was refused "not enough disk" instead of "not authorised").
TEST_F(BatchVerifierTest, AMapOutsideTheScopeIsRefusedBeforeAnythingIsInflated) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"d", "m"}, 10));
  UnzipLimits no_room;
  no_room.min_free_bytes = uint64_t{1} << 62;
  Status s = VerifyBatch(*node_, zip, Scratch(), no_room, VerifyOptions(), MapScope{std::set<std::string>{"d"}});
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.message();
  EXPECT_EQ(s.message(), "not authorised for upload on m");
  EXPECT_FALSE(std::filesystem::exists(Scratch()));
  s = VerifyBatch(*node_, zip, Scratch(), no_room, VerifyOptions(), MapScope{std::set<std::string>{"d", "m"}});
  EXPECT_EQ(s.code(), Code::kFull) << s.message();  // within its scope, the room check comes next
}

// ---- Rows the store type cannot decode (the merge would fail on them for ever) ----

TEST_F(BatchVerifierTest, RefusesStateRowWithValueShorterThanItsStoredKey) {
  const std::string batch = WriteBatch(NodeConfig(), {"d", "m"}, 10);
  EditDataTable(batch + "/m", [](MDB_txn* txn, MDB_dbi dbi) { Put(txn, dbi, RowAt(txn, dbi, 3).first, "x"); });
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  // The scheme made the error (the store type handed it on): the host names the scheme and the call.
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': row 3 of the data table is not a state row: scheme 'hashed' ("))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "libplanb_hashed_key.so): KeyScheme::DecodeRow: hashed row value of 1 bytes is "
                                    "too short for its 120-byte stored key"))  // 'x' = 120
      << s.message();
}

TEST_F(BatchVerifierTest, RefusesStateRowWithUnknownValueType) {
  const std::string batch = WriteBatch(NodeConfig(), {"d"}, 10);
  // A 16-byte version, then a value type that does not exist (the direct scheme stores no key in the value).
  EditDataTable(batch + "/d", [](MDB_txn* txn, MDB_dbi dbi) {
    Put(txn, dbi, RowAt(txn, dbi, 2).first, std::string(16, '\0') + "\x7f");
  });
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'd': row 2 of the data table is not a state row: store type "
                                          "'state' ("))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "libplanb_state_store.so): Store::DecodeRow: State row value of 17 bytes has no "
                                    "valid value type"))
      << s.message();
}

// Output embeds JSON values as they are: a batch whose JSON value is not JSON is refused, one that is passes.
TEST_F(BatchVerifierTest, RefusesAJsonValueThatIsNotJson) {
  const std::string good = WriteStream(NodeConfig(), [](StreamWriter* writer) {
    for (const char* json : {"{\"a\":[1,2.50,\"x\"]}", "1.50", "\"text\"", "null", "123456789012345678901234567890"}) {
      const Status s = writer->Add("m", StateRecord(json, json, ValueType::kJson));
      EXPECT_TRUE(s.ok()) << s.message();
    }
  });
  EXPECT_TRUE(Verify(Zip(good)).ok());
  for (const char* bad : {"{\"a\":", "{\"a\":1}}", "'single'", "", "[1,]", "\"\xff\""}) {
    const std::string batch = WriteStream(NodeConfig(), [bad](StreamWriter* writer) {
      const Status s = writer->Add("m", StateRecord("k", bad, ValueType::kJson));
      EXPECT_TRUE(s.ok()) << s.message();
    });
    const std::string zip = Zip(batch);
    const Status s = Verify(zip);
    EXPECT_EQ(s.code(), Code::kCorruption) << bad << ": " << s.message();
    EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': row 1 of the data table has a JSON value that is not JSON: "))
        << bad << ": " << s.message();
  }
}

class TypedBatchVerifierTest : public BatchVerifierTest {
 protected:
  void SetUp() override {
    const Status s = OpenTestRuntime(dir_ / "typed-node", TypedConfig(), &node_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A batch with rows of every map of TypedConfig(): several per key, overlapping ranges, times and sessions.
  std::string WriteTypedBatch() {
    return WriteStream(TypedConfig(), [](StreamWriter* writer) {
      auto add = [&](const std::string& map, const Record& record) {
        const Status s = writer->Add(map, record);
        EXPECT_TRUE(s.ok()) << map << ": " << s.message();
      };
      for (int i = 0; i < 300; ++i) {
        const std::string key = "key-" + std::to_string(i % 70);
        const std::string value = "value " + std::to_string(i);
        const int64_t time = 1700000000000 + 1000 * int64_t{i};
        for (const char* map : {"st_hashed", "st_direct"}) add(map, StateRecord(key, value));
        const TemporalEvent event{key, time, value};
        for (const char* map : {"tm_hashed", "tm_direct"}) add(map, ToRecord(event));
        const auto range = Span(10 * (i % 100), 10 * (i % 100) + i % 37, value, time);
        add("rg", RangeRecord(range));
        add("trg", RangeRecord(range));
        const SessionEvent session{key, time, 5000 + i};
        for (const char* map : {"ss_hashed", "ss_direct"}) add(map, ToRecord(session));
      }
    });
  }
};

TEST_F(TypedBatchVerifierTest, SoundBatchOfEveryBuiltInTypePasses) {
  const std::string batch = WriteTypedBatch();
  for (const auto& [map, type] : kTypedMaps) ASSERT_TRUE(fs::exists(batch + "/" + map + "/data.mdb")) << map;
  const Status s = Verify(Zip(batch));
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(TypedBatchVerifierTest, RefusesRangedRowWithThreeByteKey) {
  const std::string batch = WriteTypedBatch();
  EditDataTable(batch + "/rg", [](MDB_txn* txn, MDB_dbi dbi) { Put(txn, dbi, "abc", "\x01value"); });
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  // Ordered numbers start at 0x80 for from >= 0: "abc" sorts first.
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'rg': row 1 of the data table is not a ranged row: ")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "3 bytes")) << s.message();
}

// One malformed row in one map at a time, for every type: a State row loses its payload, any other row loses
// the last byte of its key (a time or range bound cut short).
TEST_F(TypedBatchVerifierTest, RefusesMalformedRowOfEveryType) {
  const std::string batch = WriteTypedBatch();
  for (const auto& [map, type] : kTypedMaps) {
    SCOPED_TRACE(map);
    const std::string copy = dir_ / ("copy-" + map);
    fs::copy(batch, copy, fs::copy_options::recursive);
    const bool state = type == "state";
    EditDataTable(copy + "/" + map, [&](MDB_txn* txn, MDB_dbi dbi) {
      const auto [key, value] = RowAt(txn, dbi, 2);
      if (state) {
        Put(txn, dbi, key, "");
      } else {
        Put(txn, dbi, key.substr(0, key.size() - 1), value);
      }
    });
    const std::string zip = Zip(copy);
    const Status s = Verify(zip);
    EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
    EXPECT_TRUE(Contains(s.message(), zip + ": map '" + map + "': row ")) << s.message();
    EXPECT_TRUE(Contains(s.message(), " of the data table is not a " + type + " row: ")) << s.message();
  }
}

// ---- Forged LMDB counts and sizes ----

TEST_F(BatchVerifierTest, RefusesTableClaimingMoreRowsThanItsPagesHold) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 10);
  PatchBothMetas(batch + "/m/data.mdb", kMainEntries, uint64_t{1} << 40);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': table '(main)' says it holds 1099511627776 rows, more than "
                                          "its 1 leaf pages can hold"))
      << s.message();
}

TEST_F(BatchVerifierTest, RefusesTableClaimingMorePagesThanTheFile) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 10);
  PatchBothMetas(batch + "/m/data.mdb", kMainLeafPages, uint64_t{1} << 40);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': table '(main)' says it uses 1099511627776 pages, more than "
                                          "the file's "))
      << s.message();
}

TEST_F(BatchVerifierTest, RefusesUnusableMapSizeAsCorrupt) {
  const std::string batch = WriteBatch(NodeConfig(), {"m"}, 10);
  PatchBothMetas(batch + "/m/data.mdb", kMetaMapSize, uint64_t{1} << 62);
  const std::string zip = Zip(batch);
  const Status s = Verify(zip);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': opening LMDB file: unusable map size")) << s.message();
}

// ---- The child's time limit and descriptors ----

TEST_F(BatchVerifierTest, KillsVerifierThatOutlivesItsDeadline) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"d", "m"}, 10));
  const std::set<pid_t> children_before = ChildrenOf(::getpid());
  FaultGuard hang("verify.hang");  // the child stops as a looping B-tree walk would
  const auto start = std::chrono::steady_clock::now();
  VerifyOptions options;
  options.base_deadline_ms = 50;  // counted from the child's first report, so a slow start cannot end it first
  const Status s = Verify(zip, options);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'd': verification did not finish within 0.05")) << s.message();
  EXPECT_TRUE(Contains(s.message(), " s (corrupt B-tree?)")) << s.message();
  EXPECT_LT(took, std::chrono::seconds(10));           // the 50 ms deadline ended it, not the default 30 s
  EXPECT_EQ(ChildrenOf(::getpid()), children_before);  // killed and reaped
}

TEST_F(BatchVerifierTest, ChildIsTheVerifierProgramAndKeepsNoInheritedDescriptor) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  // A lock this process holds through a descriptor the child inherits: while any copy of that descriptor lives,
  // nobody else can take the lock.
  const std::string lock_file = dir_ / "lock";
  WriteFile(lock_file, "");
  const int held = ::open(lock_file.c_str(), O_RDWR);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);

  FaultGuard hang("verify.hang");
  VerifyOptions options;
  options.base_deadline_ms = 60000;
  Status verdict;
  // The child stops itself at verify.hang, after dropping its descriptors: wait for exactly that, woken by the
  // SIGCHLD its stop sends (blocked here, and so in the verifier thread started below, to be taken by
  // sigtimedwait).
  sigset_t child_signals;
  sigset_t old_mask;
  sigemptyset(&child_signals);
  sigaddset(&child_signals, SIGCHLD);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &child_signals, &old_mask), 0);
  std::thread verifier([&] { verdict = Verify(zip, options); });
  siginfo_t stopped{};
  bool reached = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!reached && std::chrono::steady_clock::now() < deadline) {
    const timespec wait_at_most{1, 0};  // re-checks the deadline; every stop wakes the wait at once
    ::sigtimedwait(&child_signals, nullptr, &wait_at_most);
    stopped = siginfo_t{};
    reached = ::waitid(P_ALL, 0, &stopped, WSTOPPED | WNOWAIT | WNOHANG) == 0 && stopped.si_pid != 0 &&
              stopped.si_code == CLD_STOPPED;
  }
  const pid_t child = reached ? stopped.si_pid : 0;
  std::set<int> fds;
  const bool settled = reached && OpenFds(child, &fds) && !fds.empty() && *fds.rbegin() == 3;
  // A new program, not a fork of this one: nothing a thread of this process held at the time is held there.
  std::error_code ec;
  const fs::path program = reached ? fs::read_symlink("/proc/" + std::to_string(child) + "/exe", ec) : fs::path();
  bool lock_free = false;
  if (settled) {
    ::close(held);
    const int again = ::open(lock_file.c_str(), O_RDWR);
    lock_free = ::flock(again, LOCK_EX | LOCK_NB) == 0;
    ::close(again);
  }
  if (child != 0) ::kill(child, SIGKILL);
  verifier.join();
  if (!settled) ::close(held);
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr), 0);
  ASSERT_TRUE(reached) << "the verifier child never reached verify.hang";
  ASSERT_TRUE(settled) << "the child's descriptors: " << ::testing::PrintToString(fds);
  EXPECT_EQ(program, fs::canonical(VerifierProgramPath())) << ec.message();
  EXPECT_TRUE(lock_free) << "the child still holds the lock";
  EXPECT_EQ(verdict.code(), Code::kCorruption) << verdict.message();
  EXPECT_TRUE(Contains(verdict.message(), zip + ": map 'm': LMDB file is corrupt (verifier killed by signal 9)"))
      << verdict.message();
}

// ---- The verifier program itself missing or wrong: no verdict, never a pass ----

TEST_F(BatchVerifierTest, AMissingVerifierProgramIsAnErrorNotAVerdict) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  VerifyOptions options;
  options.program = dir_ / "no-such-verifier";
  const Status s = Verify(zip, options);
  EXPECT_EQ(s.code(), Code::kInternal) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": starting the verifier '" + options.program + "': No such file"))
      << s.message();
}

TEST_F(BatchVerifierTest, AVerifierThatChecksNothingPassesNothing) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m", "d"}, 10));
  VerifyOptions options;
  options.program = "/bin/true";  // exits 0 having said nothing, as a wrong file installed as the verifier would
  const Status s = Verify(zip, options);
  EXPECT_EQ(s.code(), Code::kInternal) << s.message();
  EXPECT_TRUE(Contains(s.message(), "the verifier '/bin/true' ended without a verdict (exit status 0, 0 of 2 maps"))
      << s.message();
}

// A verifier that misbehaves (a fault injected through a stand-in program: a shell script writing the report
// `report`, a printf format, to the report descriptor and then running `then`): no pass unless it began every
// map and exited 0 having said nothing else.
std::string FakeVerifier(const std::string& dir, const std::string& name, const std::string& report,
                         const std::string& then) {
  const std::string path = dir + "/" + name;
  WriteFile(path, "#!/bin/sh\nulimit -c 0\nprintf '" + report + "' >&3\n" + then + "\n");
  EXPECT_EQ(::chmod(path.c_str(), 0755), 0);
  return path;
}

TEST_F(BatchVerifierTest, AReportThatIsNotTheProtocolIsNoVerdict) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  struct Case {
    const char* report;
    const char* then;
    const char* expected;
  };
  const Case cases[] = {
      {"X", "exit 0", "ended without a verdict (exit status 0, 0 of 1 maps begun)"},
      {"B\\000\\000", "exit 0", "ended without a verdict (exit status 0, 0 of 1 maps begun)"},  // cut short
      {"B\\000\\000\\000\\000junk", "exit 0", "ended without a verdict (exit status 0, 1 of 1 maps begun)"},
      {"B\\000\\000\\000\\000", "exit 3", "ended without a verdict (exit status 3, 1 of 1 maps begun)"},
  };
  int n = 0;
  for (const Case& c : cases) {
    VerifyOptions options;
    options.program = FakeVerifier(dir_.path(), "fake" + std::to_string(n++), c.report, c.then);
    const Status s = Verify(zip, options);
    EXPECT_EQ(s.code(), Code::kInternal) << c.report << ": " << s.message();
    EXPECT_TRUE(Contains(s.message(), c.expected)) << c.report << ": " << s.message();
  }
}

TEST_F(BatchVerifierTest, AVerifierThatBeganOnlySomeMapsPassesNothing) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m", "d"}, 10));
  VerifyOptions options;
  options.program = FakeVerifier(dir_.path(), "fake", "B\\000\\000\\000\\000", "exit 0");
  const Status s = Verify(zip, options);
  EXPECT_EQ(s.code(), Code::kInternal) << s.message();
  EXPECT_TRUE(Contains(s.message(), "(exit status 0, 1 of 2 maps begun)")) << s.message();
}

TEST_F(BatchVerifierTest, AVerifierKilledBySignalJudgesTheMapItWasOnCorrupt) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  VerifyOptions options;
  options.program = FakeVerifier(dir_.path(), "fake", "B\\000\\000\\000\\000", "kill -SEGV $$");
  const Status s = Verify(zip, options);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_TRUE(Contains(s.message(), zip + ": map 'm': LMDB file is corrupt (verifier killed by signal 11)"))
      << s.message();
}

TEST_F(BatchVerifierTest, AVerifierThatNeverStartsIsKilledAndGivesNoVerdict) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  const std::set<pid_t> children_before = ChildrenOf(::getpid());
  VerifyOptions options;
  options.program = FakeVerifier(dir_.path(), "fake", "", "kill -STOP $$");  // up, but never reports a map
  options.start_deadline_ms = 50;
  options.base_deadline_ms = 600000;  // not the walk's deadline that ends it
  const auto start = std::chrono::steady_clock::now();
  const Status s = Verify(zip, options);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Code::kInternal) << s.message();  // a slow start says nothing about the files
  EXPECT_EQ(s.message(), zip + ": the verifier '" + options.program + "' did not start within 0.05 s");
  EXPECT_LT(took, std::chrono::seconds(60));
  EXPECT_EQ(ChildrenOf(::getpid()), children_before);  // killed and reaped
}

TEST_F(BatchVerifierTest, AnErrorReportKeepsItsCodeAndNamesTheMap) {
  const std::string zip = Zip(WriteBatch(NodeConfig(), {"m"}, 10));
  VerifyOptions options;
  options.program =
      FakeVerifier(dir_.path(), "fake", "B\\000\\000\\000\\000E\\003\\000\\000\\000a row does not decode", "exit 1");
  const Status s = Verify(zip, options);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_EQ(s.message(), zip + ": map 'm': a row does not decode");
}

}  // namespace
}  // namespace planb
