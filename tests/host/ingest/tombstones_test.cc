// Deletions commute with loads: for every built-in store type, homes that merge the same loads and deletions in
// every order end with the same rows, and those are the rows of the batches in time order (a deletion takes the
// matching rows older than its time; a load older than a deletion that merges after it is shadowed by the
// deletion's tombstone). Real homes, real zips, the real merge processor; one home per order.
#include "host/ingest/tombstones.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/ingest/deletion_fields.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/maintain/shard_rows_maintenance.h"
#include "host/query/map_scan.h"
#include "host/storage/content_version.h"
#include "host/transfer/batch_zip.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kBase = 1700000000000 / kHour * kHour;  // a bucket start, so each hour is its own bucket

struct TypeCase {
  const char* name;
  std::string section;      // the map's config, named m
  std::string key_filter;   // a deletion's --where that names the second key (k2 / the range from 20)
};

std::vector<TypeCase> Types() {
  return {
      {"state_direct", "[map.m]\ntype = state\nscheme = direct\n", "Key = 'k2'"},
      {"state_hashed", "[map.m]\ntype = state\nscheme = hashed\n", "Key = 'k2'"},
      {"state_lookup", "[map.m]\ntype = state\nscheme = lookup_table\n", "Key = 'k2'"},
      {"temporal", "[map.m]\ntype = temporal\nscheme = hashed\n", "Key = 'k2'"},
      {"ranged", "[map.m]\ntype = ranged\n", "KeyStart = 20"},
      {"temporal_ranged", "[map.m]\ntype = temporal_ranged\n", "KeyStart = 20"},
      {"session", "[map.m]\ntype = session\nscheme = direct\n", "Key = 'k2'"},
      {"histogram", "[map.m]\ntype = histogram\nscheme = hashed\nbucket = 1h\n", "Key = 'k2'"},
      {"metric", "[map.m]\ntype = metric\nscheme = hashed\nbucket = 1h\n", "Key = 'k2'"},
  };
}

// A record of the map's type at `time_ms` from `parts`: key, range from, range to, value (views into them).
Record MakeRecord(const std::string& type, int64_t time_ms, const std::string (&parts)[4]) {
  Record r;
  r.time_ms = time_ms;
  r.time_given = true;
  if (type == "ranged" || type == "temporal_ranged") {
    r.has_range = true;
    r.range_from = Bytes(parts[1]);
    r.range_to = Bytes(parts[2]);
  } else {
    r.has_key = true;
    r.key = Bytes(parts[0]);
  }
  if (type == "session") {
    r.kind = RecordKind::kSession;
    r.has_timeout = true;
    r.timeout_ms = 60 * 1000;
    return r;
  }
  if (type == "histogram") return r;  // an event to count: no value
  r.has_value = true;
  r.value = Bytes(parts[3]);
  return r;
}

class DeletionOrder : public ::testing::TestWithParam<TypeCase> {
 protected:
  std::string Type() const {
    const std::string& s = GetParam().section;
    const size_t at = s.find("type = ") + 7;
    return s.substr(at, s.find('\n', at) - at);
  }
  std::unique_ptr<Runtime> Open(const TempDir& dir) {
    std::unique_ptr<Runtime> runtime;
    const Status s = testing::OpenTestRuntime(dir.path(), GetParam().section + "max_store_size = 256MiB\n", &runtime);
    EXPECT_TRUE(s.ok()) << s.message();
    return runtime;
  }
  // A load of keys first..last at `time_ms` (the first key at `first_key_time_ms` when given), zipped as `name`
  // (a replacement's batch with `replace`).
  void MakeLoad(Runtime& runtime, const std::string& name, int64_t time_ms, int first = 1, int last = 3,
                bool replace = false, std::optional<int64_t> first_key_time_ms = std::nullopt) {
    StreamWriter writer(runtime.catalog(), runtime.home().writer() + "/" + name);
    for (int i = first; i <= last; ++i) {
      std::string parts[4];
      parts[0] = "k" + std::to_string(i);
      parts[1] = std::to_string(i * 10);
      parts[2] = std::to_string(i * 10 + 9);
      // Metric values are numbers; the other types' values name the batch and the key.
      parts[3] = Type() == "metric" ? (name == "late" ? "4.5" : name == "old" ? "1.25" : "2") : name + "-" + parts[0];
      const Record r = MakeRecord(Type(), i == first && first_key_time_ms ? *first_key_time_ms : time_ms, parts);
      const Status s = writer.Add("m", r);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    ASSERT_TRUE(writer.Finish().ok());
    ZipOptions options;
    options.compress = false;
    options.batch_id = "test/" + name;
    options.replace = replace;
    ASSERT_TRUE(ZipBatch(writer.dir(), Zip(name), options).ok());
    writer.Discard();
  }
  void MakeDeletion(Runtime& runtime, const std::string& name, const DeleteEntry& entry) {
    const std::string dir = runtime.home().writer() + "/" + name;
    testing::WriteFile(dir + "/m/delete", DeleteEntryText(entry));
    ZipOptions options;
    options.compress = false;
    options.batch_id = "test/" + name;
    ASSERT_TRUE(ZipBatch(dir, Zip(name), options).ok());
    ASSERT_TRUE(RemoveTree(dir).ok());
  }
  std::string Zip(const std::string& name) const { return zips_.path() + "/" + name + ".zip"; }

  // Stages the named zips in this order, merges each on its own (as a node merging them as they arrive) and
  // returns the map's rows as text, one line per row, sorted (a lookup table numbers keys in arrival order, so
  // LMDB key order may differ between homes; the rows may not).
  std::string MergeInOrder(const std::vector<std::string>& order) {
    TempDir dir;
    std::unique_ptr<Runtime> runtime = Open(dir);
    for (const std::string& name : order) {
      const std::string copy = runtime->home().root() + "/copy.zip";
      fs::copy_file(Zip(name), copy, fs::copy_options::overwrite_existing);
      uint64_t sequence = 0;
      EXPECT_TRUE(StagingStore(runtime->home()).Stage(copy, &sequence).ok());
      MergeReport report;
      const Status s = MergeProcessor(*runtime).MergePending(&report);
      EXPECT_TRUE(s.ok() && report.failed.empty()) << s.message();
    }
    return Rows(*runtime);
  }
  static std::string Rows(Runtime& runtime) {
    std::shared_ptr<MapEnv> shard;
    if (!runtime.OpenShard("m", &shard).ok()) return "(no shard)";
    std::vector<std::string> lines;
    ScanStats stats;
    const Status s = ScanMap(
        *shard, ScanRequest(),
        [&lines](const Row& row) {
          std::string out = std::string(row.key.view()) + " " + std::to_string(row.range_from) + "-" +
                 std::to_string(row.range_to) + " t" + std::to_string(row.effective_time_ms) + " s" +
                 std::to_string(row.session_start_ms) + " e" + std::to_string(row.session_end_ms) + " " +
                 std::string(row.value.view());
          for (uint32_t i = 0; i < row.own_field_count; ++i) {
            out += " " + std::to_string(row.own_fields[i].number) + "/" + std::to_string(row.own_fields[i].real);
          }
          lines.push_back(out + "\n");
          return true;
        },
        &stats);
    EXPECT_TRUE(s.ok()) << s.message();
    std::sort(lines.begin(), lines.end());
    std::string text;
    for (const std::string& line : lines) text += line;
    return text;
  }

  TempDir zips_;
  TempDir maker_dir_;
};

// Loads at hours 1 (old), 2 (late: older than the deletion, merged in any order) and 4 (new), and a deletion of
// key 2 at hour 3: in every one of the 24 orders, key 2 keeps only what hour 4 gave it, the other keys
// everything, exactly as when the batches merge in time order.
TEST_P(DeletionOrder, AKeyDeletionCommutesWithLoadsBeforeAndAfterIt) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "old", kBase + kHour);
  MakeLoad(*maker, "late", kBase + 2 * kHour);
  MakeLoad(*maker, "new", kBase + 4 * kHour);
  MakeDeletion(*maker, "del", DeleteEntry{kBase + 3 * kHour, false, GetParam().key_filter});
  std::vector<std::string> order = {"del", "late", "new", "old"};
  const std::string in_time_order = MergeInOrder({"old", "late", "del", "new"});
  ASSERT_NE(in_time_order, "");
  // Key 2 (or the range from 20) lost its rows of hours 1 and 2 and kept hour 4's; the other keys kept theirs.
  TempDir check_dir;
  std::unique_ptr<Runtime> check = Open(check_dir);
  for (const char* name : {"old", "late", "del", "new"}) {
    const std::string copy = check->home().root() + "/copy.zip";
    fs::copy_file(Zip(name), copy, fs::copy_options::overwrite_existing);
    uint64_t sequence = 0;
    ASSERT_TRUE(StagingStore(check->home()).Stage(copy, &sequence).ok());
  }
  MergeReport report;
  ASSERT_TRUE(MergeProcessor(*check).MergePending(&report).ok());
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(check->OpenShard("m", &shard).ok());
  const PluginDescriptor& type = shard->plugins().type_descriptor();
  const bool latest_only = Type() == "state" || Type() == "ranged";  // one row per key: the latest time wins
  std::map<bool, std::vector<int64_t>> times;  // key 2's row times, and the others'
  ScanStats stats;
  ASSERT_TRUE(ScanMap(*shard, ScanRequest(),
                      [&](const Row& row) {
                        times[row.key.view() == "k2" || row.range_from == 20].push_back(RowTimeMs(type, row));
                        return true;
                      },
                      &stats)
                  .ok());
  ASSERT_EQ(times[true].size(), 1u) << in_time_order;
  EXPECT_GE(times[true][0], kBase + 4 * kHour);
  EXPECT_EQ(times[false].size(), latest_only ? 2u : 6u) << in_time_order;
  do {
    SCOPED_TRACE(order[0] + "," + order[1] + "," + order[2] + "," + order[3]);
    EXPECT_EQ(MergeInOrder(order), in_time_order);
  } while (std::next_permutation(order.begin(), order.end()));
}

// A deletion of every row at hour 3, the late load merged after it: its rows are shadowed on every order, the
// new load's rows stay; a deletion that reaches a node before any load makes the shard that remembers it.
TEST_P(DeletionOrder, ADeletionOfEveryRowShadowsOlderLoadsThatComeAfterIt) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "late", kBase + 2 * kHour);
  MakeLoad(*maker, "new", kBase + 4 * kHour);
  MakeDeletion(*maker, "del", DeleteEntry{kBase + 3 * kHour, true, ""});
  const std::string only_new = MergeInOrder({"new"});
  ASSERT_NE(only_new, "(no shard)");
  EXPECT_EQ(MergeInOrder({"late", "del", "new"}), only_new);
  EXPECT_EQ(MergeInOrder({"del", "late", "new"}), only_new);
  EXPECT_EQ(MergeInOrder({"new", "del", "late"}), only_new);
  EXPECT_EQ(MergeInOrder({"del", "new", "late"}), only_new);
  EXPECT_EQ(MergeInOrder({"del", "late"}), "");  // the shard exists and holds nothing
}

// A replacement (keys 2..4 at hour 3) among loads before it (hour 1), older than it but merged in any order
// (hour 2) and after it (hour 4): in all 24 orders the map holds the replacement's rows and the newer load's,
// nothing of the older loads (key 1 only they had is gone), as when they merge in time order.
TEST_P(DeletionOrder, AReplacementCommutesWithLoadsBeforeAndAfterIt) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "old", kBase + kHour);
  MakeLoad(*maker, "late", kBase + 2 * kHour);
  MakeLoad(*maker, "repl", kBase + 3 * kHour, 2, 4, /*replace=*/true);
  MakeLoad(*maker, "new", kBase + 4 * kHour, 3, 3);
  const std::string expected = MergeInOrder({"repl", "new"});
  ASSERT_NE(expected, "(no shard)");
  EXPECT_EQ(expected.find("k1 "), std::string::npos) << expected;
  EXPECT_EQ(expected.find(" 10-19 "), std::string::npos) << expected;
  std::vector<std::string> order = {"late", "new", "old", "repl"};
  do {
    SCOPED_TRACE(order[0] + "," + order[1] + "," + order[2] + "," + order[3]);
    EXPECT_EQ(MergeInOrder(order), expected);
  } while (std::next_permutation(order.begin(), order.end()));
}

// Two replacements and a deletion: the newer replacement wins in every order (the older one, merged after it,
// changes no row, not even the newer one's row that is older than it: key 2 at hour 1), and a deletion newer
// than both takes what it matches of the winner.
TEST_P(DeletionOrder, TheNewerOfTwoReplacementsWinsInEveryOrder) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "first", kBase + 2 * kHour, 1, 2, /*replace=*/true);
  MakeLoad(*maker, "second", kBase + 3 * kHour, 2, 3, /*replace=*/true, kBase + kHour);
  MakeDeletion(*maker, "del", DeleteEntry{kBase + 4 * kHour, false, GetParam().key_filter});
  const std::string second_only = MergeInOrder({"second"});
  const std::string expected = MergeInOrder({"first", "second", "del"});
  ASSERT_NE(expected, second_only) << "the deletion takes key 2 of the second replacement";
  EXPECT_EQ(expected.find("k1 "), std::string::npos) << expected;
  std::vector<std::string> order = {"del", "first", "second"};
  do {
    SCOPED_TRACE(order[0] + "," + order[1] + "," + order[2]);
    EXPECT_EQ(MergeInOrder(order), expected);
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(MergeInOrder({"second", "first"}), second_only);
  EXPECT_EQ(MergeInOrder({"first", "second"}), second_only);
}

// A deletion by value that matches a key's newer value and not its older ones: in time order the key is gone
// (its value at the deletion's time matched), and every one of the 24 orders agrees, also where the older loads
// reach a node after the deletion (identity tombstones, deletion_fields.h). Types without a Value field refuse
// expressions on their own, additive fields instead.
TEST_P(DeletionOrder, ADeletionByValueCommutesWithOlderValuesThatComeLater) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(maker->catalog().Get("m", &plugins).ok());
  const PluginDescriptor& type = plugins->type_descriptor();
  const std::string t = Type();
  if (t == "histogram" || t == "metric") {
    const Status s = CheckDeletionExpression(DeleteEntry{kBase, false, "Count > 1"}, type, plugins->config());
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find("a deletion cannot name Count"), std::string::npos) << s.message();
    EXPECT_TRUE(CheckDeletionExpression(DeleteEntry{kBase, false, "Key = 'k2'"}, type, plugins->config()).ok());
    return;
  }
  if (t == "session") {  // no value to name
    const Status s = CheckDeletionExpression(DeleteEntry{kBase, false, "Value = 'x'"}, type, plugins->config());
    EXPECT_NE(s.message().find("unknown field 'Value'"), std::string::npos) << s.message();
    return;
  }
  MakeLoad(*maker, "older", kBase + kHour);
  MakeLoad(*maker, "late", kBase + kHour + kHour / 2);
  MakeLoad(*maker, "newer", kBase + 2 * kHour);
  MakeDeletion(*maker, "del", DeleteEntry{kBase + 3 * kHour, false, "Value = 'newer-k2'"});
  const std::string in_time_order = MergeInOrder({"older", "late", "newer", "del"});
  EXPECT_EQ(in_time_order.find("newer-k2"), std::string::npos) << in_time_order;
  if (t == "state" || t == "ranged") {
    // One value per key: key 2's was newer-k2 when the deletion came, so key 2 is gone, not back to an older one.
    EXPECT_EQ(in_time_order.find("-k2"), std::string::npos) << in_time_order;
  } else {
    EXPECT_NE(in_time_order.find("older-k2"), std::string::npos) << in_time_order;  // other times' rows stay
  }
  std::vector<std::string> order = {"del", "late", "newer", "older"};
  do {
    SCOPED_TRACE(order[0] + "," + order[1] + "," + order[2] + "," + order[3]);
    EXPECT_EQ(MergeInOrder(order), in_time_order);
  } while (std::next_permutation(order.begin(), order.end()));
}

// Maintenance prunes tombstones and identity tombstones with the records of merged batches: after that window a
// batch older than the deletion is no longer shadowed (docs/storage-nodes.md says so).
// The types whose rows have a value (deletions by value apply to them).
class ValueDeletionOrder : public DeletionOrder {
 protected:
  void ExpectEveryOrderGives(std::vector<std::string> order, const std::string& expected) {
    std::sort(order.begin(), order.end());
    do {
      std::string names;
      for (const std::string& name : order) names += name + ",";
      SCOPED_TRACE(names);
      EXPECT_EQ(MergeInOrder(order), expected);
    } while (std::next_permutation(order.begin(), order.end()));
  }
};

// Two loads give key 2 values at the same time: the higher tie hash is the value. A deletion by value of either
// gives, in every order, what it gives in time order: the key gone when it matched the value, kept when it
// matched the loser.
TEST_P(ValueDeletionOrder, ADeletionByValueOfOneOfTwoValuesAtTheSameTimeCommutes) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "a", kBase + kHour, 2, 2);
  MakeLoad(*maker, "b", kBase + kHour, 2, 2);
  MakeDeletion(*maker, "dela", DeleteEntry{kBase + 5 * kHour, false, "Value = 'a-k2'"});
  MakeDeletion(*maker, "delb", DeleteEntry{kBase + 5 * kHour, false, "Value = 'b-k2'"});
  const std::string both = MergeInOrder({"a", "b"});
  for (const char* deletion : {"dela", "delb"}) {
    SCOPED_TRACE(deletion);
    const std::string expected = MergeInOrder({"a", "b", deletion});
    EXPECT_TRUE(expected.empty() || expected == both) << expected;
    ExpectEveryOrderGives({"a", "b", deletion}, expected);
  }
}

// A replacement whose row of key 2 is older than a value it replaces, and a deletion of that replaced value: the
// replacement's row stays in every order (the deletion found nothing when it came, in time order).
TEST_P(ValueDeletionOrder, AReplacementsOwnRowsAreNotTakenByADeletionOfAValueItReplaced) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "a", kBase + 2 * kHour, 2, 2);
  MakeLoad(*maker, "r", kBase + 2 * kHour, 2, 3, /*replace=*/true, kBase + kHour);
  MakeDeletion(*maker, "d", DeleteEntry{kBase + 5 * kHour, false, "Value = 'a-k2'"});
  const std::string expected = MergeInOrder({"r"});
  EXPECT_NE(expected.find("r-k2"), std::string::npos) << expected;
  ExpectEveryOrderGives({"a", "d", "r"}, expected);
}

// A load older than a replacement, of a value a deletion names: the replacement shadows it before the deletion
// can take it, whatever the batch ids' order, so the replacement's older row of that key stays.
TEST_P(ValueDeletionOrder, ARowAReplacementShadowsIsNotTakenByADeletionByValue) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "r1", kBase + 10 * kHour, 2, 3, /*replace=*/true, kBase + 3 * kHour);
  MakeDeletion(*maker, "del", DeleteEntry{kBase + 8 * kHour, false, "Value = 'l-k2'"});
  MakeLoad(*maker, "l", kBase + 5 * kHour, 2, 2);
  const std::string expected = MergeInOrder({"r1"});
  EXPECT_NE(expected.find("r1-k2"), std::string::npos) << expected;
  ExpectEveryOrderGives({"del", "l", "r1"}, expected);
}

INSTANTIATE_TEST_SUITE_P(ValueTypes, ValueDeletionOrder,
                         ::testing::ValuesIn([] {
                           std::vector<TypeCase> with_values;
                           for (const TypeCase& c : Types()) {
                             const std::string n = c.name;
                             if (n != "session" && n != "histogram" && n != "metric") with_values.push_back(c);
                           }
                           return with_values;
                         }()),
                         [](const ::testing::TestParamInfo<TypeCase>& info) { return std::string(info.param.name); });

// Pruning is the host's, whatever the type: one type is enough.
class DeletionPruning : public DeletionOrder {};

TEST_P(DeletionPruning, MaintenancePrunesTombstonesWithTheMergedBatchRecords) {
  std::unique_ptr<Runtime> maker = Open(maker_dir_);
  MakeLoad(*maker, "newer", kBase + 2 * kHour);
  MakeLoad(*maker, "late", kBase + kHour);
  MakeDeletion(*maker, "del", DeleteEntry{kBase + 3 * kHour, false, "Value = 'newer-k2' or Key = 'k3'"});
  TempDir dir;
  std::unique_ptr<Runtime> runtime = Open(dir);
  for (const char* name : {"newer", "del"}) {
    const std::string copy = runtime->home().root() + "/copy.zip";
    fs::copy_file(Zip(name), copy, fs::copy_options::overwrite_existing);
    uint64_t sequence = 0;
    ASSERT_TRUE(StagingStore(runtime->home()).Stage(copy, &sequence).ok());
  }
  MergeReport report;
  ASSERT_TRUE(MergeProcessor(*runtime).MergePending(&report).ok());
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("m", &shard).ok());
  std::vector<Tombstone> tombstones;
  ASSERT_TRUE(ReadShardTombstones(shard->env(), &tombstones).ok());
  ASSERT_EQ(tombstones.size(), 1u);
  // Eight days on, with records kept seven: the tombstone and the identity tombstone of newer-k2 go.
  const std::set<std::string, std::less<>> keep;
  RowsMaintenance maintained;
  const Status s = MaintainShardRows(*shard, CurrentTimeMs() + 8 * 24 * kHour, /*dry_run=*/false, &keep,
                                     7 * 24 * kHour, &maintained);
  ASSERT_TRUE(s.ok()) << s.message();
  // The deletion's tombstone and an identity tombstone for each row it took (k2 and k3: the expression names a
  // value, so every row it matches leaves one).
  EXPECT_EQ(maintained.tombstones_pruned, 3u);
  ASSERT_TRUE(ReadShardTombstones(shard->env(), &tombstones).ok());
  EXPECT_TRUE(tombstones.empty());
  shard.reset();
  const std::string copy = runtime->home().root() + "/copy.zip";
  fs::copy_file(Zip("late"), copy, fs::copy_options::overwrite_existing);
  uint64_t sequence = 0;
  ASSERT_TRUE(StagingStore(runtime->home()).Stage(copy, &sequence).ok());
  ASSERT_TRUE(MergeProcessor(*runtime).MergePending(&report).ok());
  EXPECT_NE(Rows(*runtime).find("late-k2"), std::string::npos) << Rows(*runtime);
}

INSTANTIATE_TEST_SUITE_P(State, DeletionPruning, ::testing::Values(Types()[0]),
                         [](const ::testing::TestParamInfo<TypeCase>& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(BuiltInTypes, DeletionOrder, ::testing::ValuesIn(Types()),
                         [](const ::testing::TestParamInfo<TypeCase>& info) { return std::string(info.param.name); });

TEST(Tombstones, RecordReadCarryAndPruneRoundTrip) {
  TempDir dir;
  Env env;
  Env::Options options;
  options.max_dbs = 4;
  ASSERT_TRUE(env.Open(dir.path(), options).ok());
  Txn txn;
  ASSERT_TRUE(txn.Begin(env.get(), 0).ok());
  MDB_dbi dbi = 0;
  bool found = true;
  ASSERT_TRUE(OpenTombstones(txn.get(), false, &dbi, &found).ok());
  EXPECT_FALSE(found);
  ASSERT_TRUE(OpenTombstones(txn.get(), true, &dbi, &found).ok());
  EXPECT_TRUE(found);
  ASSERT_TRUE(RecordTombstone(txn.get(), dbi, Tombstone{"n/a", 100, false, DeleteEntry{-5, true, ""}}).ok());
  ASSERT_TRUE(RecordTombstone(txn.get(), dbi, Tombstone{"n/b", 300, true, DeleteEntry{7, false, "Key = 'x'"}}).ok());
  std::vector<Tombstone> read;
  ASSERT_TRUE(ReadTombstones(txn.get(), dbi, &read).ok());
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].batch_id, "n/a");
  EXPECT_EQ(read[0].merged_ms, 100);
  EXPECT_EQ(read[0].entry.time_ms, -5);
  EXPECT_TRUE(read[0].entry.all);
  EXPECT_FALSE(read[0].replacement);
  EXPECT_EQ(read[1].entry.where, "Key = 'x'");
  EXPECT_TRUE(read[1].replacement);
  uint64_t pruned = 0;
  ASSERT_TRUE(PruneTombstones(txn.get(), dbi, 200, &pruned).ok());
  EXPECT_EQ(pruned, 1u);
  ASSERT_TRUE(ReadTombstones(txn.get(), dbi, &read).ok());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].batch_id, "n/b");
  // A value that is not a tombstone is corruption naming the deletion, not a silent skip.
  MDB_val k = Bytes("n/c").mdb();
  MDB_val v = Bytes("short").mdb();
  ASSERT_EQ(mdb_put(txn.get(), dbi, &k, &v, 0), MDB_SUCCESS);
  Status s = ReadTombstones(txn.get(), dbi, &read);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("n/c"), std::string::npos) << s.message();
  std::string bad(8, '\0');
  bad += "xtime 1\nall\n";  // a kind that is neither 'd' nor 'r'
  v = Bytes(bad).mdb();
  ASSERT_EQ(mdb_put(txn.get(), dbi, &k, &v, 0), MDB_SUCCESS);
  s = ReadTombstones(txn.get(), dbi, &read);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("not 'd' or 'r'"), std::string::npos) << s.message();
  bad = std::string(8, '\0') + "dtime x\nall\n";
  v = Bytes(bad).mdb();
  ASSERT_EQ(mdb_put(txn.get(), dbi, &k, &v, 0), MDB_SUCCESS);
  s = ReadTombstones(txn.get(), dbi, &read);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("no 'time <milliseconds>' line"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace planb
