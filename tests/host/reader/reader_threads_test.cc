// planb::Reader across threads: two threads looking up while the map's environment is swapped under them (a test
// hook publishes a copy of the shard, as maintenance publishes a new snapshot); thread contexts freed when a
// thread exits; a Reader destroyed while a thread that used it lives on (its environments close then, and the
// thread goes on with another Reader); the maintenance thread on a node that reads snapshots.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <lmdb.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "host/reader/reader_impl.h"
#include "planb/reader.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::ReferenceData;

constexpr char kConfig[] = "[map.m]\ntype = state\nscheme = hashed\n";
constexpr int kKeys = 500;

std::string Key(int i) { return "key-" + std::to_string(i); }

// Loads key-i -> `prefix`-i for every i.
void LoadValues(const CliEnv& env, const std::string& prefix) {
  std::string body;
  for (int i = 0; i < kKeys; ++i) body += testing::Ref("m", Key(i), prefix + "-" + std::to_string(i)) + "\n";
  const ProcessResult r = env.Load({env.Write(prefix + ".xml", ReferenceData(body))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::unique_ptr<Reader> OpenReader(const CliEnv& env) {
  ReaderOptions options;
  options.config_path = env.config();
  options.home = env.home();
  options.maintenance_interval_ms = 0;
  std::unique_ptr<Reader> reader;
  Status s = Reader::Open(options, &reader);
  EXPECT_TRUE(s.ok()) << s.message();
  return reader;
}

// How many times `path` is mapped into this process (an open LMDB environment maps its data file once).
int Mappings(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  const std::string canonical = std::filesystem::canonical(path).string();
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.size() >= canonical.size() &&
        line.compare(line.size() - canonical.size(), canonical.size(), canonical) == 0) {
      ++count;
    }
  }
  return count;
}

// Spins (no sleeping) until `condition` holds or `seconds` pass; false on timeout.
template <typename Condition>
bool WaitFor(Condition condition, int seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

struct WorkerCounts {
  std::atomic<uint64_t> lookups{0};
  uint64_t old_values = 0;
  uint64_t new_values = 0;
  uint64_t wrong = 0;
  std::string first_wrong;
};

TEST(ReaderThreads, LookupsStayCorrectWhileTheEnvironmentIsSwappedUnderThem) {
  CliEnv env(kConfig);
  LoadValues(env, "old");
  // The copy: the shard as it was (as a snapshot would be), opened read-only without a lock file like one.
  testing::TempDir copy_dir;
  std::filesystem::copy_file(env.shard_data("m"), copy_dir / "data.mdb");
  LoadValues(env, "new");

  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  Reader::Impl* impl = Reader::Impl::Of(*reader);
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(impl->runtime().catalog().Get("m", &plugins).ok());
  std::shared_ptr<MapEnv> copy;
  Status s =
      MapEnv::Open(copy_dir.path(), plugins, MapEnv::Mode::kOpenExisting, MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS, &copy);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(impl->runtime().OpenShard("m", &shard).ok());

  std::atomic<bool> stop{false};
  WorkerCounts counts[2];
  auto work = [&](WorkerCounts* c, int seed) {
    for (uint64_t n = 0; !stop.load(); ++n) {
      const int i = static_cast<int>((n * 7919 + static_cast<uint64_t>(seed)) % kKeys);
      const LookupResult r = reader->Lookup("m", Key(i));
      const std::string value(r.value.view());
      if (r.code == Code::kOk && value == "old-" + std::to_string(i)) {
        ++c->old_values;
      } else if (r.code == Code::kOk && value == "new-" + std::to_string(i)) {
        ++c->new_values;
      } else if (c->wrong++ == 0) {
        c->first_wrong = Key(i) + " -> code " + CodeName(r.code) + " '" + value + "' " + r.error;
      }
      c->lookups.fetch_add(1);
    }
  };
  std::thread a(work, &counts[0], 1);
  std::thread b(work, &counts[1], 2);
  bool progressed = true;
  for (int round = 0; round < 200 && progressed; ++round) {
    ASSERT_TRUE(impl->TEST_Publish("m", round % 2 == 0 ? copy : shard).ok());
    // Each thread finishes a lookup that began after the swap before the next one.
    const uint64_t seen[2] = {counts[0].lookups.load(), counts[1].lookups.load()};
    progressed =
        WaitFor([&] { return counts[0].lookups.load() >= seen[0] + 2 && counts[1].lookups.load() >= seen[1] + 2; });
  }
  stop.store(true);
  a.join();
  b.join();
  ASSERT_TRUE(progressed) << "a looking-up thread stopped making progress";
  for (const WorkerCounts& c : counts) {
    EXPECT_EQ(c.wrong, 0u) << c.first_wrong;
    EXPECT_GT(c.old_values, 0u) << "never read the copy";
    EXPECT_GT(c.new_values, 0u) << "never read the shard";
  }
  // The threads have exited: their contexts are gone, and with them their hold on both environments.
  EXPECT_EQ(impl->TEST_ContextCount(), 0u);
  ASSERT_TRUE(impl->TEST_Publish("m", shard).ok());
  const std::weak_ptr<MapEnv> weak_copy = copy;
  copy.reset();
  EXPECT_TRUE(weak_copy.expired()) << "someone still holds the swapped-out environment";
  EXPECT_EQ(reader->Lookup("m", Key(3)).value.view(), "new-3");
}

TEST(ReaderThreads, AThreadThatExitsFreesItsContexts) {
  CliEnv env(kConfig);
  LoadValues(env, "v");
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  Reader::Impl* impl = Reader::Impl::Of(*reader);
  EXPECT_EQ(reader->Lookup("m", Key(1)).value.view(), "v-1");
  EXPECT_EQ(impl->TEST_ContextCount(), 1u);
  std::string seen;
  std::thread t([&] { seen = std::string(reader->Lookup("m", Key(2)).value.view()); });
  t.join();
  EXPECT_EQ(seen, "v-2");
  EXPECT_EQ(impl->TEST_ContextCount(), 1u);  // this thread's only
}

TEST(ReaderThreads, AReaderDestroyedBeforeAThreadThatUsedItClosesItsEnvironments) {
  CliEnv env(kConfig);
  LoadValues(env, "v");
  std::unique_ptr<Reader> first = OpenReader(env);
  ASSERT_NE(first, nullptr);
  std::unique_ptr<Reader> second;

  std::mutex mutex;
  std::condition_variable changed;
  int stage = 0;
  auto advance = [&](int to) {
    std::lock_guard<std::mutex> lock(mutex);
    stage = to;
    changed.notify_all();
  };
  auto await = [&](int at) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(60), [&] { return stage >= at; });
  };
  std::string first_value, second_value;
  size_t entries_before = 0, entries_after = 0;
  std::thread t([&] {
    first_value = std::string(first->Lookup("m", Key(4)).value.view());
    entries_before = ThreadContextCount();
    advance(1);
    if (!await(2)) return;
    // `first` is gone; this thread's entry for it must never be used, and is dropped here.
    second_value = std::string(second->Lookup("m", Key(5)).value.view());
    entries_after = ThreadContextCount();
    advance(3);
    await(4);
  });
  ASSERT_TRUE(await(1));
  const int mapped_while_open = Mappings(env.shard_data("m"));
  first.reset();  // t is alive and holds a context of `first`
  const int mapped_after = Mappings(env.shard_data("m"));
  second = OpenReader(env);
  advance(2);
  ASSERT_TRUE(await(3));
  EXPECT_EQ(Reader::Impl::Of(*second)->TEST_ContextCount(), 1u);
  advance(4);
  t.join();
  EXPECT_EQ(first_value, "v-4");
  EXPECT_EQ(second_value, "v-5");
  EXPECT_EQ(entries_before, 1u);
  EXPECT_EQ(entries_after, 1u);
  EXPECT_EQ(mapped_while_open, 1);
  EXPECT_EQ(mapped_after, 0) << "the destroyed Reader's environment is still open";
  EXPECT_EQ(Reader::Impl::Of(*second)->TEST_ContextCount(), 0u);  // freed at t's exit
}

TEST(ReaderThreads, ManyReadersAndThreadsComeAndGo) {
  CliEnv env(kConfig);
  LoadValues(env, "v");
  for (int round = 0; round < 5; ++round) {
    std::unique_ptr<Reader> reader = OpenReader(env);
    ASSERT_NE(reader, nullptr);
    std::vector<std::thread> threads;
    std::atomic<int> right{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = t; i < kKeys; i += 4)
          right += reader->Lookup("m", Key(i)).value.view() == "v-" + std::to_string(i);
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(right.load(), kKeys);
    EXPECT_EQ(reader->Lookup("m", Key(0)).value.view(), "v-0");
  }
  EXPECT_LE(ThreadContextCount(), 1u);  // this thread's entries of destroyed Readers were dropped
}

TEST(ReaderThreads, OnAStorageNodeTheMaintenanceThreadRunsOnlyWhenAsked) {
  CliEnv env(kConfig);
  std::unique_ptr<Reader> reader;
  ReaderOptions options;
  options.config_path = env.config();
  options.home = env.home();
  options.maintenance_interval_ms = 0;
  ASSERT_TRUE(Reader::Open(options, &reader).ok());
  EXPECT_FALSE(Reader::Impl::Of(*reader)->maintenance_thread_running());
  EXPECT_TRUE(reader->Maintain().ok());
  // It reopens shards that a compaction swapped in (reader_swap_test.cc).
  options.maintenance_interval_ms = 3600 * 1000;
  reader.reset();
  ASSERT_TRUE(Reader::Open(options, &reader).ok());
  EXPECT_TRUE(Reader::Impl::Of(*reader)->maintenance_thread_running());
  EXPECT_TRUE(reader->Maintain().ok());
}

TEST(ReaderThreads, ANodeThatReadsSnapshotsRunsMaintenanceAndReportsMapErrors) {
  testing::TempDir dir;
  testing::WriteFile(dir / "planb.ini",
                     "node_name = proc\nnode_list = ,node1\nrequest_timeout = 200ms\n"
                     "[node.node1]\nendpoint = tcp://127.0.0.1:*\n"
                     "[map.remote_map]\ntype = state\n");
  ReaderOptions options;
  options.config_path = dir / "planb.ini";
  options.home = dir / "home";
  options.maintenance_interval_ms = 3600 * 1000;  // the destructor must not wait for it
  std::unique_ptr<Reader> reader;
  Status s = Reader::Open(options, &reader);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(Reader::Impl::Of(*reader)->maintenance_thread_running());
  const LookupResult r = reader->Lookup("remote_map", "k");
  EXPECT_NE(r.code, Code::kOk);
  EXPECT_NE(r.code, Code::kNotFound);
  EXPECT_THAT(r.error, HasSubstr("remote_map"));
  // Within the retry interval the same answer comes back without another attempt.
  const LookupResult again = reader->Lookup("remote_map", "k");
  EXPECT_EQ(again.code, r.code);
  EXPECT_STREQ(again.error, r.error);
  EXPECT_TRUE(reader->Maintain().ok());
  reader.reset();
}

}  // namespace
}  // namespace planb
