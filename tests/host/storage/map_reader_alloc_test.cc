// Warm MapReader lookups allocate nothing (STYLE.md, "Lookup path"). This file replaces the global allocation
// functions of the whole test binary (and of the plugins it loads, which resolve operator new to the program's
// definition); they only count while a thread has counting switched on, and otherwise just call malloc/free.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/storage/map_reader.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace {

thread_local bool counting = false;
std::atomic<uint64_t> allocations{0};

void* Allocate(std::size_t size) {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  for (;;) {
    if (void* p = std::malloc(size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* AllocateAligned(std::size_t size, std::align_val_t align) {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t alignment = std::max(static_cast<std::size_t>(align), sizeof(void*));
  if (size == 0) size = 1;
  size = (size + alignment - 1) / alignment * alignment;  // aligned_alloc wants a multiple
  for (;;) {
    if (void* p = std::aligned_alloc(alignment, size)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

// Counts allocations made by this thread while alive.
class AllocationCounter {
 public:
  AllocationCounter() : start_(allocations.load()) { counting = true; }
  ~AllocationCounter() { counting = false; }
  uint64_t count() const { return allocations.load() - start_; }

 private:
  const uint64_t start_;
};

}  // namespace

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align) { return AllocateAligned(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return AllocateAligned(size, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace planb {
namespace {

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

constexpr int kKeys = 1000;
constexpr int kLookups = 10000;

TEST(MapReaderAlloc, TheCounterSeesAllocationsInThisProgramAndInPlugins) {
  // A positive control, so that the zero below means something.
  std::unique_ptr<std::string> owned;
  {
    AllocationCounter counter;
    owned = std::make_unique<std::string>(100, 'x');
    EXPECT_GE(counter.count(), 1u);
  }
  PluginRegistry registry;
  ASSERT_TRUE(::planb::testing::LoadBuiltInPlugins(&registry).ok());
  const LoadedPlugin* hashed = registry.Find(PluginKind::kKeyScheme, "hashed");
  ASSERT_NE(hashed, nullptr);
  PluginArgs args;
  ErrorBuffer error;
  KeyScheme* scheme = nullptr;
  uint64_t in_plugin = 0;
  {
    AllocationCounter counter;
    scheme = hashed->descriptor->create_scheme(&args, &error);  // `new HashedKeyScheme` inside the .so
    in_plugin = counter.count();
  }
  ASSERT_NE(scheme, nullptr);
  hashed->descriptor->destroy_scheme(scheme);
  EXPECT_GE(in_plugin, 1u);
}

TEST(MapReaderAlloc, CountsOnlyOnTheCountingThread) {
  std::atomic<int> stage{0};
  std::unique_ptr<std::vector<int>> made_elsewhere;
  std::thread other([&] {
    while (stage.load() != 1) {
    }
    made_elsewhere = std::make_unique<std::vector<int>>(1000);
    stage.store(2);
  });
  uint64_t seen = 0;
  {
    AllocationCounter counter;
    stage.store(1);
    while (stage.load() != 2) {
    }
    seen = counter.count();
  }
  other.join();
  ASSERT_NE(made_elsewhere, nullptr);
  EXPECT_EQ(seen, 0u);
}

TEST(MapReaderAlloc, RefreshAllocatesNothing) {
  // map_reader.h: "Takes a fresh snapshot of the environment (reset + renew: no allocation)".
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), StateMapSection("m", "hashed"), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(StageRows(*runtime, "m", {{"k", "v"}}).ok());
  MergeProcessor merger(*runtime);
  MergeReport report;
  ASSERT_TRUE(merger.MergePending(&report).ok());
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("m", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  ASSERT_TRUE(reader.Refresh().ok());  // warm

  uint64_t allocated = 0;
  bool all_ok = true;
  {
    AllocationCounter counter;
    for (int i = 0; i < 100; ++i) all_ok = reader.Refresh().ok() && all_ok;
    allocated = counter.count();
  }
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(allocated, 0u);
  LookupKey lookup;
  lookup.key = Bytes(std::string_view("k"));
  Row row;
  ErrorBuffer error;
  EXPECT_EQ(reader.Lookup(lookup, &row, &error), Code::kOk);
}

struct AllocParam {
  const char* test_name;
  const char* scheme;
  const char* extra;
};

void PrintTo(const AllocParam& param, std::ostream* os) { *os << param.test_name; }

class MapReaderAllocTest : public ::testing::TestWithParam<AllocParam> {};

TEST_P(MapReaderAllocTest, WarmLookupsAllocateNothing) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), StateMapSection("m", GetParam().scheme, GetParam().extra), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::pair<std::string, std::string>> rows;
  for (int i = 0; i < kKeys; ++i) {
    rows.emplace_back("key-" + std::to_string(i) + std::string(i % 7 * 10, 'k'), "value-" + std::to_string(i));
  }
  ASSERT_TRUE(StageRows(*runtime, "m", rows).ok());
  MergeProcessor merger(*runtime);
  MergeReport report;
  s = merger.MergePending(&report);
  ASSERT_TRUE(s.ok()) << s.message();

  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("m", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  // Keys built before counting; lookups alternate hits and misses.
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(rows[i].first);
    keys.push_back("missing-" + std::to_string(i));
  }
  LookupKey lookup;
  Row row;
  ErrorBuffer error;
  for (const std::string& key : keys) {  // warm up
    lookup.key = Bytes(key);
    (void)reader.Lookup(lookup, &row, &error);
  }

  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t value_bytes = 0;
  uint64_t allocated = 0;
  {
    AllocationCounter counter;
    for (int i = 0; i < kLookups; ++i) {
      lookup.key = Bytes(keys[static_cast<size_t>(i) % keys.size()]);
      const Code code = reader.Lookup(lookup, &row, &error);
      if (code == Code::kOk) {
        ++hits;
        value_bytes += row.value.size;
      } else if (code == Code::kNotFound) {
        ++misses;
      }
    }
    allocated = counter.count();
  }
  EXPECT_EQ(allocated, 0u);
  EXPECT_EQ(hits, kLookups / 2u);
  EXPECT_EQ(misses, kLookups / 2u);
  EXPECT_GT(value_bytes, 0u);
}

const AllocParam kAllocParams[] = {
    {"Hashed", "hashed", ""},
    {"Hashed8Bits", "hashed", "hash_bits = 8\n"},  // clashes: lookups walk the cursor
    {"Direct", "direct", ""},
};

INSTANTIATE_TEST_SUITE_P(Schemes, MapReaderAllocTest, ::testing::ValuesIn(kAllocParams),
                         [](const ::testing::TestParamInfo<AllocParam>& info) { return info.param.test_name; });

}  // namespace
}  // namespace planb
