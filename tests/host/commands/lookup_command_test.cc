// `planb lookup` run in process over real shards (read_commands.h): how a session miss is worded, and what the
// check behind the wording costs and reports.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "host/commands/command_line.h"
#include "host/commands/read_commands.h"
#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/heap_trap.h"
#include "support/scheme_matrix.h"
#include "support/map_fixture.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::MapSection;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::RunWithoutHeap;
using ::planb::testing::SessionEvent;
using ::planb::testing::SessionXml;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

constexpr int64_t k10h = 1704103200000;  // 2024-01-01T10:00:00Z
constexpr int64_t kHour = 3600 * 1000;

class LookupCommandTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_.path(), MapSection("m", "session", GetParam().scheme, GetParam().ConfigLines()), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void Load(const std::vector<SessionEvent>& events) {
    const std::string file = dir_ / "sessions.xml";
    WriteFile(file, SessionXml("m", events));
    LoadOptions options;
    options.effective_time_ms = 0;  // sessions carry their <time>
    LoadReport report;
    const Status s = RunLoad(*runtime_, {file}, options, &report);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> Shard() {
    std::shared_ptr<MapEnv> shard;
    const Status s = runtime_->OpenShard("m", &shard);
    EXPECT_TRUE(s.ok()) << s.message();
    return shard;
  }

  // `planb lookup ARGS...` in this process: exit status, stdout, stderr.
  int Lookup(const std::vector<std::string>& args, std::string* out, std::string* err) {
    std::vector<std::string> tokens = {"lookup"};
    tokens.insert(tokens.end(), args.begin(), args.end());
    CommandLine cli;
    const Status s = ParseCommandLine(tokens, &cli);
    EXPECT_TRUE(s.ok()) << s.message();
    std::ostringstream out_stream;
    std::ostringstream err_stream;
    const int exit_code = RunLookupCommand(*runtime_, cli, out_stream, err_stream);
    *out = out_stream.str();
    *err = err_stream.str();
    return exit_code;
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

// Review of issue 11: the miss check ran a scan of its own and dropped its Status, so a row it could not read
// made the miss say "no key" (exit 1). The error is reported instead (exit 2, nothing on stdout).
TEST_P(LookupCommandTest, ASessionMissWhoseCheckFailsIsAnErrorNotNoKey) {
  Load({{"s", k10h, 15 * 60 * 1000}});
  {
    // A row of "s" before its real one that does not decode (it ends before it starts). A lookup at 11:00 never
    // reaches it (the real session, 10:00 to 10:15, is the last one that could cover 11:00); the miss check does.
    std::shared_ptr<MapEnv> shard = Shard();
    Txn txn;
    ASSERT_TRUE(txn.Begin(shard->env(), 0).ok());
    MDB_cursor* cursor = nullptr;
    ASSERT_EQ(mdb_cursor_open(txn.get(), shard->data(), &cursor), 0);
    MDB_val k;
    MDB_val v;
    ASSERT_EQ(mdb_cursor_get(cursor, &k, &v, MDB_FIRST), 0);
    std::string key(static_cast<const char*>(k.mv_data), k.mv_size);
    const std::string value(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_cursor_close(cursor);
    ASSERT_GT(key.size(), 16u);
    auto* bounds = reinterpret_cast<uint8_t*>(key.data() + key.size() - 16);
    PutOrderedI64(bounds, k10h - kHour);
    PutOrderedI64(bounds + 8, k10h - 2 * kHour);
    MDB_val new_key{key.size(), key.data()};
    MDB_val new_value{value.size(), const_cast<char*>(value.data())};
    ASSERT_EQ(mdb_put(txn.get(), shard->data(), &new_key, &new_value, 0), 0);
    ASSERT_TRUE(txn.Commit().ok());
  }
  std::string out;
  std::string err;
  EXPECT_EQ(Lookup({"m", "s", "--time", "2024-01-01T11:00:00Z"}, &out, &err), kExitError) << err;
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("before it starts"), std::string::npos) << err;
  // --quiet words no miss, so it asks nothing more: a plain miss.
  EXPECT_EQ(Lookup({"m", "s", "--time", "2024-01-01T11:00:00Z", "--quiet"}, &out, &err), kExitNotFound) << err;
  EXPECT_EQ(err, "");
}

TEST_P(LookupCommandTest, AMissSaysWhetherTheKeyHasSessionsAtOtherTimes) {
  Load({{"s", k10h, 15 * 60 * 1000}, {"u", k10h + kHour, 15 * 60 * 1000}});
  std::string out;
  std::string err;
  EXPECT_EQ(Lookup({"m", "s", "t", "u", "--time", "2024-01-01T10:30:00Z", "--format", "csv"}, &out, &err),
            kExitNotFound);
  EXPECT_EQ(out, "key,start,end,found\ns,,,false\nt,,,false\nu,,,false\n");
  EXPECT_EQ(err,
            "planb: m: no session at 2024-01-01T10:30:00.000Z for key 's'\n"
            "planb: m: no key 't' at 2024-01-01T10:30:00.000Z\n"
            "planb: m: no session at 2024-01-01T10:30:00.000Z for key 'u'\n");
}

// The check behind the wording uses the lookup's transaction and cursor: warm, it allocates nothing.
TEST_P(LookupCommandTest, TheMissCheckAllocatesNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  std::vector<SessionEvent> events;
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back("key-" + std::to_string(i) + std::string(i % 7 * 10, 'k'));
    events.push_back({keys.back(), k10h + i * 1000, 60 * 1000});
  }
  Load(events);
  MapReader reader;
  ASSERT_TRUE(reader.Open(Shard()).ok());
  std::vector<std::string> absent;
  for (int i = 0; i < 300; ++i) absent.push_back("absent-" + std::to_string(i));
  bool any = false;
  for (const std::string& key : keys) {  // warm, and right before the trap
    ASSERT_TRUE(reader.HasAnyRowOf(Bytes(key), &any, nullptr).ok());
    ASSERT_TRUE(any) << key;
  }
  for (const std::string& key : absent) {
    ASSERT_TRUE(reader.HasAnyRowOf(Bytes(key), &any, nullptr).ok());
    ASSERT_FALSE(any) << key;
  }
  const auto result = RunWithoutHeap([&] {
    bool has = false;
    for (int round = 0; round < 4; ++round) {
      for (const std::string& key : keys) {
        if (!reader.HasAnyRowOf(Bytes(key), &has, nullptr).ok()) return 2;
        if (!has) return 3;
      }
      for (const std::string& key : absent) {
        if (!reader.HasAnyRowOf(Bytes(key), &has, nullptr).ok()) return 2;
        if (has) return 3;
      }
    }
    return 0;
  });
  ASSERT_TRUE(result.forked);
  ASSERT_TRUE(result.armed);
  EXPECT_EQ(result.signal, 0) << "the check allocated (operator new threw)";
  EXPECT_EQ(result.exit_code, 0) << "2: the check failed (malloc returned null?), 3: a wrong answer";
}

INSTANTIATE_TEST_SUITE_P(SessionSchemes, LookupCommandTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
