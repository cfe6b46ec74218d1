// Warm MapReader lookups allocate nothing (STYLE.md, "Lookup path"). This file replaces the global allocation
// functions of the whole test binary (and of the plugins it loads, which resolve operator new to the program's
// definition); they only count while a thread has counting switched on, and otherwise just call malloc/free.
// With glibc it also replaces malloc, calloc, realloc and free (forwarding to glibc's own __libc_* entry points),
// so that C allocations count too: LMDB and expat allocate with malloc, and so may a plugin. Sanitizers interpose
// malloc themselves, so under them the C counter is left out and its tests skip.
#include <expat.h>
#include <gtest/gtest.h>
#include <lmdb.h>

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
#include "support/scheme_matrix.h"
#include "support/test_env.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_MEMORY__)
#define PLANB_COUNT_C_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define PLANB_COUNT_C_ALLOCATIONS 0
#endif
#endif
#if !defined(PLANB_COUNT_C_ALLOCATIONS)
#if defined(__GLIBC__)
#define PLANB_COUNT_C_ALLOCATIONS 1
#else
#define PLANB_COUNT_C_ALLOCATIONS 0
#endif
#endif

namespace {

// initial-exec: read inside malloc, which must not allocate to find its thread's copy.
thread_local bool counting __attribute__((tls_model("initial-exec"))) = false;
std::atomic<uint64_t> allocations{0};    // operator new
std::atomic<uint64_t> c_allocations{0};  // malloc, calloc, realloc

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

// Counts allocations made by this thread while alive: operator new in count(), malloc & co. in c_count().
class AllocationCounter {
 public:
  AllocationCounter() : start_(allocations.load()), c_start_(c_allocations.load()) { counting = true; }
  ~AllocationCounter() { counting = false; }
  uint64_t count() const { return allocations.load() - start_; }
  uint64_t c_count() const { return c_allocations.load() - c_start_; }

 private:
  const uint64_t start_;
  const uint64_t c_start_;
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

#if PLANB_COUNT_C_ALLOCATIONS
// glibc's allocator under its exported internal names; every other allocation function (memalign, free of
// memory from anywhere) stays glibc's and works on the same heap.
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void __libc_free(void* p);

void* malloc(std::size_t size) noexcept {
  if (counting) c_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  if (counting) c_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) noexcept {
  if (counting) c_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, size);
}
void free(void* p) noexcept { __libc_free(p); }
}  // extern "C"
#endif

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

TEST(MapReaderAlloc, TheCCounterSeesMallocInThisProgramAndInLibraries) {
#if !PLANB_COUNT_C_ALLOCATIONS
  GTEST_SKIP() << "malloc is not replaced in this build (a sanitizer, or not glibc)";
#else
  // A positive control, so that the zero below means something. Called through volatile pointers, which the
  // compiler cannot see through, so that it cannot elide a malloc/free pair.
  void* (*volatile do_malloc)(std::size_t) = std::malloc;
  void* (*volatile do_calloc)(std::size_t, std::size_t) = std::calloc;
  void* (*volatile do_realloc)(void*, std::size_t) = std::realloc;
  void (*volatile do_free)(void*) = std::free;
  uint64_t after_malloc = 0, after_calloc = 0, after_realloc = 0, after_free = 0;
  {
    AllocationCounter counter;
    void* p = do_malloc(100);
    after_malloc = counter.c_count();
    void* q = do_calloc(10, 10);
    after_calloc = counter.c_count();
    p = do_realloc(p, 100000);
    after_realloc = counter.c_count();
    do_free(p);
    do_free(q);
    after_free = counter.c_count();
    EXPECT_EQ(counter.count(), 0u) << "malloc is not operator new";
  }
  EXPECT_EQ(after_malloc, 1u);
  EXPECT_EQ(after_calloc, 2u);
  EXPECT_EQ(after_realloc, 3u);
  EXPECT_EQ(after_free, 3u);

  // The libraries' own calls reach it too: LMDB callocs its environment, expat mallocs its parser.
  uint64_t in_lmdb = 0;
  {
    AllocationCounter counter;
    MDB_env* env = nullptr;
    const int rc = mdb_env_create(&env);
    in_lmdb = counter.c_count();
    ASSERT_EQ(rc, 0);
    mdb_env_close(env);
  }
  EXPECT_GE(in_lmdb, 1u);
  uint64_t in_expat = 0;
  {
    AllocationCounter counter;
    XML_Parser parser = XML_ParserCreate(nullptr);
    in_expat = counter.c_count();
    ASSERT_NE(parser, nullptr);
    XML_ParserFree(parser);
  }
  EXPECT_GE(in_expat, 1u);

  // And operator new, which allocates with malloc, shows in both counts.
  std::unique_ptr<std::string> owned;
  uint64_t new_c = 0;
  {
    AllocationCounter counter;
    owned = std::make_unique<std::string>(100, 'x');
    new_c = counter.c_count();
  }
  EXPECT_GE(new_c, 1u);
#endif
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
  uint64_t c_seen = 0;
  {
    AllocationCounter counter;
    stage.store(1);
    while (stage.load() != 2) {
    }
    seen = counter.count();
    c_seen = counter.c_count();
  }
  other.join();
  ASSERT_NE(made_elsewhere, nullptr);
  EXPECT_EQ(seen, 0u);
  EXPECT_EQ(c_seen, 0u);
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
  uint64_t c_allocated = 0;
  bool all_ok = true;
  {
    AllocationCounter counter;
    for (int i = 0; i < 100; ++i) all_ok = reader.Refresh().ok() && all_ok;
    allocated = counter.count();
    c_allocated = counter.c_count();
  }
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(allocated, 0u);
  EXPECT_EQ(c_allocated, 0u) << "malloc, calloc or realloc (LMDB's, say)";
  LookupKey lookup;
  lookup.key = Bytes(std::string_view("k"));
  Row row;
  ErrorBuffer error;
  EXPECT_EQ(reader.Lookup(lookup, &row, &error), Code::kOk);
}

class MapReaderAllocTest : public ::testing::TestWithParam<SchemeParam> {};

TEST_P(MapReaderAllocTest, WarmLookupsAllocateNothing) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), StateMapSection("m", GetParam().scheme, GetParam().ConfigLines()), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::pair<std::string, std::string>> rows;
  for (int i = 0; i < kKeys; ++i) {
    rows.emplace_back("key-" + std::to_string(i) + std::string(i % 7 * 10, 'k'),
                      "value-" + std::to_string(i) + std::string(20, 'v'));  // longer than inline (dedup)
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
  uint64_t c_allocated = 0;
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
    c_allocated = counter.c_count();
  }
  EXPECT_EQ(allocated, 0u);
  EXPECT_EQ(c_allocated, 0u) << "malloc, calloc or realloc (LMDB's, expat's or a plugin's)";
  EXPECT_EQ(hits, kLookups / 2u);
  EXPECT_EQ(misses, kLookups / 2u);
  EXPECT_GT(value_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Schemes, MapReaderAllocTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// A type with fields of its own (the "scores" test fixture): the reader's own-field array is sized once, in Open,
// so warm lookups still allocate nothing, and every hit carries its values.
TEST(MapReaderAlloc, WarmLookupsOfATypeWithOwnFieldsAllocateNothing) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(),
                             std::string("plugin_dir = ") + PLANB_FIXTURE_DIR +
                                 "/own_fields\n[map.s]\ntype = scores\nscheme = hashed\nmax_store_size = 1GiB\n",
                             &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::pair<std::string, std::string>> rows;
  for (int i = 0; i < kKeys; ++i) {
    rows.emplace_back("key-" + std::to_string(i),
                      "count=" + std::to_string(i) + ";ratio=0.5;active=true;seen=2024-01-01T00:00:00Z;note=n");
  }
  ASSERT_TRUE(StageRows(*runtime, "s", rows).ok());
  MergeProcessor merger(*runtime);
  MergeReport report;
  s = merger.MergePending(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("s", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(rows[i].first);
    keys.push_back("missing-" + std::to_string(i));
  }
  LookupKey lookup;
  Row row;
  ErrorBuffer error;
  for (const std::string& key : keys) {
    lookup.key = Bytes(key);
    (void)reader.Lookup(lookup, &row, &error);
  }
  int64_t count_sum = 0;
  uint64_t hits = 0;
  uint64_t with_fields = 0;
  uint64_t allocated = 0;
  uint64_t c_allocated = 0;
  {
    AllocationCounter counter;
    for (int i = 0; i < kLookups; ++i) {
      lookup.key = Bytes(keys[static_cast<size_t>(i) % keys.size()]);
      if (reader.Lookup(lookup, &row, &error) != Code::kOk) continue;
      ++hits;
      if (row.own_fields != nullptr && row.own_field_count == 6) {
        ++with_fields;
        count_sum += row.own_fields[1].number;
      }
    }
    allocated = counter.count();
    c_allocated = counter.c_count();
  }
  EXPECT_EQ(allocated, 0u);
  EXPECT_EQ(c_allocated, 0u);
  EXPECT_EQ(hits, kLookups / 2u);
  EXPECT_EQ(with_fields, hits);
  EXPECT_GT(count_sum, 0);
}

}  // namespace
}  // namespace planb
