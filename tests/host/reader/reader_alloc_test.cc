// Warm Reader lookups allocate nothing (STYLE.md, "Lookup path"), proven with the heap trap (support/heap_trap.h):
// in a forked child that cannot allocate at all, single lookups and LookupMany of every store type, hits, misses,
// "now", keys of the wrong kind and unknown maps all give the answers computed before the fork.
// Twice: on the shards (a storage node; LMDB's lock file is shared with the parent, see below) and on read-only
// copies without a lock file published under the Reader, as snapshots are.
#include <gtest/gtest.h>
#include <lmdb.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "host/reader/reader_impl.h"
#include "planb/reader.h"
#include "support/heap_trap.h"
#include "support/scheme_matrix.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using testing::RunWithoutHeap;

constexpr int64_t kJan2024 = 1704067200000;  // 2024-01-01T00:00:00Z

struct Probe {
  std::string map;
  bool number_key = false;
  std::string key;
  int64_t number = 0;
  std::optional<int64_t> time_ms;  // absent = now
  // Filled from a warm lookup before the fork.
  Code code = Code::kNotFound;
  std::string value;
  int64_t start = 0;
  int64_t end = 0;
  std::string error;
};

LookupResult Ask(Reader& reader, const Probe& p) {
  if (p.number_key) {
    return p.time_ms ? reader.Lookup(p.map, p.number, LookupTime::At(*p.time_ms)) : reader.Lookup(p.map, p.number);
  }
  return p.time_ms ? reader.Lookup(p.map, p.key, LookupTime::At(*p.time_ms)) : reader.Lookup(p.map, p.key);
}

ReaderKey KeyOf(const Probe& p) {
  ReaderKey key;
  if (p.number_key) {
    key.number = p.number;
  } else {
    key.key = p.key;
  }
  if (p.time_ms) key.time = LookupTime::At(*p.time_ms);
  return key;
}

// Compares without allocating (string_view against the expected strings).
bool Same(const LookupResult& r, const Probe& p) {
  return r.code == p.code && r.value.view() == p.value && r.session_start_ms == p.start && r.session_end_ms == p.end &&
         std::string_view(r.error) == p.error;
}

std::string V6(int block, const std::string& last) {
  char text[64];
  std::snprintf(text, sizeof text, "2001:db8:%x::%s", block, last.c_str());
  return text;
}

Probe P(const std::string& map, bool number_key, const std::string& key, int64_t number = 0,
        std::optional<int64_t> time_ms = std::nullopt) {
  Probe p;
  p.map = map;
  p.number_key = number_key;
  p.key = key;
  p.number = number;
  p.time_ms = time_ms;
  return p;
}

void Record(const LookupResult& r, Probe* p) {
  p->code = r.code;
  p->value = std::string(r.value.view());
  p->start = r.session_start_ms;
  p->end = r.session_end_ms;
  p->error = r.error;
}

class ReaderAllocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> e;
    for (int i = 0; i < 200; ++i) {
      const std::string k = "key-" + std::to_string(i) + std::string(i % 7 * 10, 'k');
      // Every third value long enough for value_dedup's table (over 16 bytes), the rest inline.
      const std::string v = "value-" + std::to_string(i) + std::string(i % 3 == 0 ? 40 : 0, 'v');
      for (const std::string& map : kState) e.push_back(testing::TimedRef(map, "", k, v));
      for (const std::string& map : kTemporal) {
        e.push_back(testing::TimedRef(map, "2024-01-01T00:00:00Z", k, v + "-a"));
        e.push_back(testing::TimedRef(map, "2024-02-01T00:00:00Z", k, v + "-b"));
      }
      for (const std::string& map : kSession) {
        e.push_back(testing::SessionEvent(map, k, "2024-01-01T10:00:00.000Z", "15m"));
      }
      const std::string from = std::to_string(i * 100), to = std::to_string(i * 100 + 49);
      e.push_back(testing::RangeRef("rg", "", from, to, v));
      e.push_back(testing::RangeRef("trg", "2024-01-01T00:00:00Z", from, to, v + "-a"));
      e.push_back(testing::RangeRef("trg", "2024-03-01T00:00:00Z", from, to, v + "-b"));
      // Address maps, answered from their read index (range_answer_index.h).
      const std::string net = "10.0." + std::to_string(i) + ".";
      e.push_back(testing::RangeRef("ip4", "", net + "0", net + "127", v));
      e.push_back(testing::RangeRef("ip6", "", net + "0", net + "127", v + "-4"));
      e.push_back(testing::RangeRef("ip6", "", V6(i, "0"), V6(i, "ffff"), v + "-6"));
      keys_.push_back(k);
    }
    const ProcessResult r = env_.Load({env_.Write("all.xml", testing::ReferenceData(testing::Lines(e)))});
    ASSERT_EQ(r.exit_code, 0) << r.err;

    for (int i = 0; i < 200; i += 7) {
      const std::string& k = keys_[i];
      for (const std::string& map : kState) {
        probes_.push_back(P(map, false, k));
        probes_.push_back(P(map, false, k + "-absent"));
      }
      for (const std::string& map : kTemporal) {
        probes_.push_back(P(map, false, k));  // now
        probes_.push_back(P(map, false, k, 0, kJan2024 + 1));
        probes_.push_back(P(map, false, k, 0, kJan2024 - 1));
      }
      for (const std::string& map : kSession) {
        probes_.push_back(P(map, false, k, 0, kJan2024 + 10 * 3600 * 1000 + 60 * 1000));
        probes_.push_back(P(map, false, k, 0, kJan2024 + 12 * 3600 * 1000));
      }
      probes_.push_back(P("rg", true, "", i * 100 + 10));
      probes_.push_back(P("rg", true, "", i * 100 + 60));
      probes_.push_back(P("trg", true, "", i * 100 + 10));  // now
      probes_.push_back(P("trg", true, "", i * 100 + 10, kJan2024 + 1));
      const std::string net = "10.0." + std::to_string(i) + ".";
      probes_.push_back(P("ip4", false, net + "5"));
      probes_.push_back(P("ip4", false, net + "200"));  // a miss
      probes_.push_back(P("ip6", false, net + "5"));
      probes_.push_back(P("ip6", false, "::ffff:" + net + "6"));
      probes_.push_back(P("ip6", false, V6(i, "5")));
      probes_.push_back(P("ip6", false, V6(i + 1000, "5")));  // a miss
    }
    // Errors without a map environment: a key of the wrong kind, a time for a type without time, no such map.
    probes_.push_back(P("rg", false, "10"));
    probes_.push_back(P("st_hashed", true, "", 10));
    probes_.push_back(P("st_direct", false, keys_[0], 0, kJan2024));
    probes_.push_back(P("no_such_map", false, "k"));

    ReaderOptions options;
    options.config_path = env_.config();
    options.home = env_.home();
    options.maintenance_interval_ms = 0;
    Status s = Reader::Open(options, &reader_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // Answers every probe (warming this thread's contexts) and records the answers; batches per map too.
  void Warm() {
    for (Probe& p : probes_) Record(Ask(*reader_, p), &p);
    for (const Probe& p : probes_) ASSERT_TRUE(Same(Ask(*reader_, p), p)) << p.map << " " << p.key << p.number;
    size_t found = 0;
    for (const Probe& p : probes_) found += p.code == Code::kOk;
    ASSERT_GT(found, probes_.size() / 3);
    for (const MapStats& map : reader_->Stats().maps) {
      if (map.map == "ip4" || map.map == "ip6" || map.map == "rg") {
        ASSERT_TRUE(map.read_index_current) << map.map << ": " << map.read_index_error;  // the path under test
      }
    }
    for (const char* map : {"ip4", "ip6", "rg"}) batches_.push_back(Batch(map));
    for (const std::string& map : kState) batches_.push_back(Batch(map));
    for (const std::string& map : {std::string("trg"), std::string("ss_direct")}) batches_.push_back(Batch(map));
  }

  struct BatchProbe {
    std::string map;
    std::vector<ReaderKey> keys;
    std::vector<const Probe*> expected;
    std::vector<LookupResult> results;
  };
  BatchProbe Batch(const std::string& map) {
    BatchProbe b;
    b.map = map;
    for (const Probe& p : probes_) {
      if (p.map == map && (p.code == Code::kOk || p.code == Code::kNotFound)) {
        b.keys.push_back(KeyOf(p));
        b.expected.push_back(&p);
      }
    }
    b.results.resize(b.keys.size());
    EXPECT_EQ(reader_->LookupMany(map, b.keys.data(), b.keys.size(), b.results.data()), Code::kOk);
    return b;
  }

  // The trapped child's work: 0 when every answer is as before the fork.
  int LookUpEverything() {
    for (int round = 0; round < 20; ++round) {
      for (const Probe& p : probes_) {
        if (!Same(Ask(*reader_, p), p)) return 10;
      }
      for (BatchProbe& b : batches_) {
        if (reader_->LookupMany(b.map, b.keys.data(), b.keys.size(), b.results.data()) != Code::kOk) return 11;
        for (size_t i = 0; i < b.keys.size(); ++i) {
          if (!Same(b.results[i], *b.expected[i])) return 12;
        }
      }
    }
    return 0;
  }

  // Every probe and batch again in a forked child that cannot allocate: all answered as before the fork.
  void ExpectWarmLookupsAllocateNothing() {
    const auto result = RunWithoutHeap([this] { return LookUpEverything(); });
    ASSERT_TRUE(result.forked);
    EXPECT_TRUE(result.armed);
    EXPECT_EQ(result.signal, 0);
    EXPECT_EQ(result.exit_code, 0) << "10: a lookup, 11/12: a batch answered differently";
  }

  // A map of each text-key store type under every scheme of the matrix, and the ranged types.
  const std::vector<std::string> kState = SchemeMapNames("st");
  const std::vector<std::string> kTemporal = SchemeMapNames("tm");
  const std::vector<std::string> kSession = SchemeMapNames("ss");
  CliEnv env_{SchemeMapSections("st", "state") + SchemeMapSections("tm", "temporal") +
              SchemeMapSections("ss", "session") + "[map.rg]\ntype = ranged\n[map.trg]\ntype = temporal_ranged\n"
              "[map.ip4]\ntype = ranged\nkey_format = ipv4\n[map.ip6]\ntype = ranged\nkey_format = ip\n"};
  std::vector<std::string> keys_;
  std::vector<Probe> probes_;
  std::vector<BatchProbe> batches_;
  std::unique_ptr<Reader> reader_;
};

TEST_F(ReaderAllocTest, TheTrapCatchesTheFirstLookupOfAMapOnAThread) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  // A positive control: the rare path (a new thread context, a transaction begun) allocates, and is caught.
  // (Another map first, so that this thread's table exists: glibc would otherwise abort on its own, unable to
  // register the table's destructor.)
  ASSERT_TRUE(reader_->Lookup("st_direct", keys_[1]).found());
  const auto result = RunWithoutHeap([this] { return reader_->Lookup("st_hashed", keys_[1]).found() ? 0 : 3; });
  ASSERT_TRUE(result.forked);
  EXPECT_TRUE(result.armed);
  EXPECT_EQ(result.signal, SIGABRT) << "exit code " << result.exit_code;  // bad_alloc, uncaught
}

// LMDB (lmdb.h, "fork") forbids new transactions in a forked child. Renewing a reset transaction the parent began,
// as warm lookups do, only writes the transaction id into the parent's reader slot in the shared lock file; the
// parent waits for the child meanwhile, and its next lookup resets the slot before renewing.
TEST_F(ReaderAllocTest, WarmLookupsOnShardsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  Warm();
  ExpectWarmLookupsAllocateNothing();
  EXPECT_EQ(LookUpEverything(), 0);  // and the parent goes on reading
}

// The State maps answered from their point read index, which maintenance builds (point_answer_index.h): batches
// take it before the hot-key cache.
TEST_F(ReaderAllocTest, WarmLookupsFromPointIndexesAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  for (const std::string& map : kState) ASSERT_TRUE(reader_->Prepare(map).ok()) << map;
  ASSERT_TRUE(reader_->Maintain().ok());
  for (const MapStats& map : reader_->Stats().maps) {
    if (map.map.rfind("st_", 0) == 0) {
      ASSERT_TRUE(map.read_index_current) << map.map << ": " << map.read_index_error;
    }
  }
  Warm();
  ExpectWarmLookupsAllocateNothing();
}

TEST_F(ReaderAllocTest, WarmLookupsOnLockFreeCopiesAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  // Each map with data swapped for a read-only copy opened MDB_NOLOCK, as snapshots are: renew touches no
  // shared memory at all.
  Reader::Impl* impl = Reader::Impl::Of(*reader_);
  std::vector<std::unique_ptr<testing::TempDir>> copies;
  std::vector<std::string> maps = {"rg", "trg", "ip4", "ip6"};
  for (const auto* family : {&kState, &kTemporal, &kSession}) maps.insert(maps.end(), family->begin(), family->end());
  for (const std::string& map : maps) {
    copies.push_back(std::make_unique<testing::TempDir>());
    std::filesystem::copy_file(env_.shard_data(map), *copies.back() / "data.mdb");
    std::shared_ptr<const MapPlugins> plugins;
    ASSERT_TRUE(impl->runtime().catalog().Get(map, &plugins).ok());
    std::shared_ptr<MapEnv> copy;
    Status s = MapEnv::Open(copies.back()->path(), plugins, MapEnv::Mode::kOpenExisting,
                            MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS, &copy);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(impl->TEST_Publish(map, copy).ok());
  }
  Warm();
  ExpectWarmLookupsAllocateNothing();
  reader_.reset();  // before the copies' directories go
}

}  // namespace
}  // namespace planb
