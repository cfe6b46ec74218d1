// planb::Reader on a store type with fields of its own (the "scores" test fixture, tests/fixtures/own_fields.cc):
// LookupResult::fields carries their values, MapInfo::fields describes them, LookupMany gives each result its own
// values, and warm lookups of such a type still allocate nothing (the heap trap, support/heap_trap.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "planb/reader.h"
#include "support/heap_trap.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;

class ReaderOwnFields : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string body;
    for (int i = 0; i < 50; ++i) {
      body += Ref("scores", "k" + std::to_string(i),
                  "count=" + std::to_string(i) + ";ratio=" + std::to_string(i) + ".5;active=" +
                      (i % 2 ? "true" : "false") + ";seen=2024-01-01T00:00:00Z;note=n" + std::to_string(i)) +
              "\n";
    }
    const ProcessResult r = env_.Load({env_.Write("s.xml", ReferenceData(body))});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ReaderOptions options;
    options.config_path = env_.config();
    options.home = env_.home();
    options.maintenance_interval_ms = 0;
    Status s = Reader::Open(options, &reader_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  CliEnv env_{std::string("plugin_dir = ") + PLANB_FIXTURE_DIR +
              "/own_fields\n[map.scores]\ntype = scores\nscheme = hashed\n[map.plain]\ntype = state\n"};
  std::unique_ptr<Reader> reader_;
};

TEST_F(ReaderOwnFields, MapInfoDescribesTheFields) {
  MapInfo info;
  ASSERT_TRUE(reader_->Describe("scores", &info).ok());
  ASSERT_EQ(info.fields.size(), 6u);
  EXPECT_EQ(info.fields[0].name, "Key");
  EXPECT_FALSE(info.fields[0].own);
  EXPECT_EQ(info.fields[2].name, "Ratio");
  EXPECT_EQ(info.fields[2].kind, FieldKind::kDouble);
  EXPECT_TRUE(info.fields[2].own);
  EXPECT_EQ(info.fields[2].flags, kFieldShownByLookup);
  EXPECT_EQ(info.fields[1].flags, kFieldShownByLookup | kFieldZeroWhenAbsent);
  EXPECT_EQ(info.fields[3].kind, FieldKind::kBool);
  ASSERT_TRUE(reader_->Describe("plain", &info).ok());
  EXPECT_EQ(info.fields.size(), 3u);
}

TEST_F(ReaderOwnFields, LookupCarriesTheValues) {
  const LookupResult r = reader_->Lookup("scores", "k7");
  ASSERT_TRUE(r.found()) << r.error;
  ASSERT_EQ(r.field_count, 6u);
  ASSERT_NE(r.fields, nullptr);
  EXPECT_EQ(r.fields[1].number, 7);
  EXPECT_EQ(r.fields[2].real, 7.5);
  EXPECT_TRUE(r.fields[3].flag);
  EXPECT_EQ(r.fields[4].number, 1704067200000);
  EXPECT_EQ(r.fields[5].text.view(), "n7");
  const LookupResult miss = reader_->Lookup("scores", "absent");
  EXPECT_FALSE(miss.found());
  EXPECT_EQ(miss.fields, nullptr);
  EXPECT_EQ(miss.field_count, 0u);
  ASSERT_EQ(env_.Load({env_.Write("p.xml", ReferenceData(Ref("plain", "k", "v")))}).exit_code, 0);
  const LookupResult plain = reader_->Lookup("plain", "k");
  ASSERT_TRUE(plain.found()) << plain.error;
  EXPECT_EQ(plain.fields, nullptr) << "a type without own fields";
}

TEST_F(ReaderOwnFields, LookupManyGivesEachResultItsOwnValues) {
  std::vector<std::string> names = {"k1", "absent", "k2", "k49"};
  std::vector<ReaderKey> keys(names.size());
  for (size_t i = 0; i < names.size(); ++i) keys[i].key = names[i];
  std::vector<LookupResult> results(names.size());
  ASSERT_EQ(reader_->LookupMany("scores", keys.data(), keys.size(), results.data()), Code::kOk);
  ASSERT_TRUE(results[0].found());
  EXPECT_FALSE(results[1].found());
  EXPECT_EQ(results[1].fields, nullptr);
  EXPECT_EQ(results[0].fields[1].number, 1);
  EXPECT_EQ(results[2].fields[1].number, 2);
  EXPECT_EQ(results[3].fields[1].number, 49);
  EXPECT_EQ(results[3].fields[5].text.view(), "n49");
  EXPECT_NE(results[0].fields, results[2].fields);
}

TEST_F(ReaderOwnFields, WarmLookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  std::vector<std::string> names;
  for (int i = 0; i < 60; ++i) names.push_back("k" + std::to_string(i));  // 50..59 miss
  std::vector<ReaderKey> keys(names.size());
  for (size_t i = 0; i < names.size(); ++i) keys[i].key = names[i];
  std::vector<LookupResult> results(names.size());
  // Warm: this thread's context, the reader's array and LookupMany's buffer at this batch size.
  ASSERT_TRUE(reader_->Lookup("scores", "k0").found());
  ASSERT_EQ(reader_->LookupMany("scores", keys.data(), keys.size(), results.data()), Code::kOk);
  const auto result = testing::RunWithoutHeap([&] {
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < 60; ++i) {
        const LookupResult r = reader_->Lookup("scores", names[i]);
        if (r.found() != (i < 50)) return 10;
        if (r.found() && (r.field_count != 6 || r.fields[1].number != i)) return 11;
      }
      if (reader_->LookupMany("scores", keys.data(), keys.size(), results.data()) != Code::kOk) return 12;
      for (int i = 0; i < 50; ++i) {
        if (!results[i].found() || results[i].fields[1].number != i) return 13;
      }
    }
    return 0;
  });
  ASSERT_TRUE(result.forked);
  EXPECT_TRUE(result.armed);
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.exit_code, 0);
}

}  // namespace
}  // namespace planb
