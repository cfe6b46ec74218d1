#include "host/plugin_host/plugin_registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::LoadBuiltInPlugins;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(PluginRegistry, DefaultDirectoryIsTheBuildsPluginDirectory) {
  EXPECT_EQ(std::filesystem::weakly_canonical(PluginRegistry::DefaultDirectory()),
            std::filesystem::weakly_canonical(PLANB_PLUGIN_DIR));
}

TEST(PluginRegistry, LoadsTheBuiltInPlugins) {
  PluginRegistry registry;
  const Status s = LoadBuiltInPlugins(&registry);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(registry.plugins().size(), testing::kBuiltInPlugins);

  const LoadedPlugin* state = registry.Find(PluginKind::kStoreType, "state");
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->descriptor->abi_major, kAbiMajor);
  EXPECT_EQ(state->descriptor->version, 2u);
  EXPECT_TRUE(state->descriptor->uses_key_scheme);
  EXPECT_EQ(state->descriptor->key_suffix_size, 0u);
  EXPECT_NE(state->descriptor->create_store, nullptr);
  EXPECT_TRUE(Contains(state->file, "state_store")) << state->file;
  EXPECT_NE(state->library, nullptr);

  const LoadedPlugin* hashed = registry.Find(PluginKind::kKeyScheme, "hashed");
  ASSERT_NE(hashed, nullptr);
  EXPECT_EQ(hashed->descriptor->version, 2u);
  ASSERT_EQ(hashed->descriptor->option_count, 2u);
  EXPECT_STREQ(hashed->descriptor->options[0].name, "hash_bits");
  EXPECT_STREQ(hashed->descriptor->options[0].default_value, "64");
  EXPECT_STREQ(hashed->descriptor->options[1].name, "value_dedup");
  EXPECT_STREQ(hashed->descriptor->options[1].default_value, "false");
  EXPECT_NE(hashed->descriptor->create_scheme, nullptr);

  const LoadedPlugin* direct = registry.Find(PluginKind::kKeyScheme, "direct");
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(direct->descriptor->version, 1u);
  ASSERT_EQ(direct->descriptor->option_count, 1u);
  EXPECT_STREQ(direct->descriptor->options[0].name, "value_dedup");
  EXPECT_EQ(direct->descriptor->table_count, 2u);  // the value tables, empty unless value_dedup = true
}

TEST(PluginRegistry, FindTellsKindsApart) {
  PluginRegistry registry;
  ASSERT_TRUE(LoadBuiltInPlugins(&registry).ok());
  EXPECT_EQ(registry.Find(PluginKind::kKeyScheme, "state"), nullptr);
  EXPECT_EQ(registry.Find(PluginKind::kStoreType, "hashed"), nullptr);
  EXPECT_EQ(registry.Find(PluginKind::kStoreType, "State"), nullptr);  // names are exact
}

// The one failure `registry` recorded, or a test failure.
PluginFailure OnlyFailure(const PluginRegistry& registry) {
  EXPECT_EQ(registry.failures().size(), 1u);
  return registry.failures().empty() ? PluginFailure{} : registry.failures().front();
}

TEST(PluginRegistry, RecordsAnotherAbiVersionAndGoesOn) {
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({PLANB_FIXTURE_DIR "/wrong_abi"});
  ASSERT_TRUE(s.ok()) << s.message();
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_EQ(f.file, PLANB_FIXTURE_DIR "/wrong_abi/libplanb_wrong_abi.so");
  const std::string theirs = std::to_string(kAbiMajor + 1) + "." + std::to_string(kAbiMinor);
  const std::string ours = std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor);
  EXPECT_TRUE(Contains(f.reason, "built against plugin SDK " + theirs)) << f.reason;
  EXPECT_TRUE(Contains(f.reason, "this planb runs SDK " + ours)) << f.reason;
  EXPECT_FALSE(Contains(f.reason, f.file)) << "the file is said beside the reason: " << f.reason;
  EXPECT_TRUE(registry.plugins().empty());
}

TEST(PluginRegistry, LoadFileOfAnotherAbiVersionIsAnErrorNamingTheFile) {
  PluginRegistry registry;
  const Status s = registry.LoadFile(PLANB_FIXTURE_DIR "/wrong_abi/libplanb_wrong_abi.so");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "plugin " PLANB_FIXTURE_DIR "/wrong_abi/libplanb_wrong_abi.so: built against"))
      << s.message();
  EXPECT_TRUE(registry.failures().empty());
}

TEST(PluginRegistry, RefusesAStoreTypeWhoseKeySuffixLeavesNoRoomForAKey) {
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({PLANB_FIXTURE_DIR "/too_wide_suffix"}).ok());
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_TRUE(Contains(f.reason, "store type 'too_wide_suffix' appends 511 bytes to each key, leaving no room for "
                                 "a key in LMDB's 511-byte keys")) << f.reason;
  EXPECT_EQ(registry.Find(PluginKind::kStoreType, "too_wide_suffix"), nullptr);
}

TEST(PluginRegistry, RecordsALibraryWithoutEntryPoint) {
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({PLANB_FIXTURE_DIR "/no_entry_point"}).ok());
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_EQ(f.file, PLANB_FIXTURE_DIR "/no_entry_point/libplanb_no_entry_point.so");
  EXPECT_TRUE(Contains(f.reason, "not a Plan B plugin")) << f.reason;
  EXPECT_TRUE(registry.plugins().empty());
}

TEST(PluginRegistry, RecordsAFileThatIsNotAnElfLibraryWithDlopensReason) {
  TempDir dir;
  WriteFile(dir / "libplanb_junk.so", "this is not a shared library\n");
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({dir.path()}).ok());
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_EQ(f.file, dir / "libplanb_junk.so");
  EXPECT_TRUE(Contains(f.reason, "cannot be loaded")) << f.reason;
  // dlerror's words (too short / invalid ELF header), not an unrelated errno appended by Boost.DLL.
  EXPECT_TRUE(Contains(f.reason, "file too short") || Contains(f.reason, "invalid ELF header")) << f.reason;
  EXPECT_FALSE(Contains(f.reason, "Bad file descriptor")) << f.reason;
}

TEST(PluginRegistry, RecordsAnUnresolvedSymbolNamingIt) {
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({PLANB_FIXTURE_DIR "/unresolved_symbol"}).ok());
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_TRUE(Contains(f.reason, "undefined symbol: planb_fixture_symbol_nobody_defines")) << f.reason;
  EXPECT_FALSE(Contains(f.reason, "Bad file descriptor")) << f.reason;
}

TEST(PluginRegistry, RecordsAnEntryPointThatThrows) {
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({PLANB_FIXTURE_DIR "/throwing_entry"}).ok());
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_EQ(f.file, PLANB_FIXTURE_DIR "/throwing_entry/libplanb_throwing_entry.so");
  EXPECT_EQ(f.reason, "its entry point threw: injected failure in the entry point");
}

TEST(PluginRegistry, ConsidersOnlyRegularFilesNamedLibplanbSo) {
  TempDir dir;
  WriteFile(dir / "README.txt", "not a plugin\n");
  WriteFile(dir / "junk.so", "no libplanb_ prefix\n");
  WriteFile(dir / "libother.so", "another library's\n");
  WriteFile(dir / "libplanb_junk.so.bak", "not a plugin either\n");
  WriteFile(dir / "libplanb_.so", "no name\n");
  std::filesystem::create_directory(dir / "libplanb_dir.so");
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({dir.path()});
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(registry.plugins().empty());
  EXPECT_TRUE(registry.failures().empty());
}

TEST(PluginRegistry, FailedFilesDoNotStopTheOthers) {
  TempDir dir;
  WriteFile(dir / "libplanb_a_junk.so", "junk\n");
  std::filesystem::copy_file(PLANB_FIXTURE_DIR "/id_table/libplanb_id_table.so", dir / "libplanb_b_id_table.so");
  WriteFile(dir / "libplanb_c_junk.so", "junk\n");
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({dir.path()}).ok());
  EXPECT_NE(registry.Find(PluginKind::kKeyScheme, "id_table"), nullptr);
  ASSERT_EQ(registry.failures().size(), 2u);
  EXPECT_EQ(registry.failures()[0].file, dir / "libplanb_a_junk.so");
  EXPECT_EQ(registry.failures()[1].file, dir / "libplanb_c_junk.so");
}

TEST(PluginRegistry, MissingDirectoryIsAnError) {
  TempDir dir;
  const std::string missing = dir / "no-such-dir";
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({missing});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), missing)) << s.message();
  EXPECT_TRUE(Contains(s.message(), "does not exist")) << s.message();
}

TEST(PluginRegistry, AFileIsNotADirectory) {
  TempDir dir;
  WriteFile(dir / "file", "x");
  PluginRegistry registry;
  EXPECT_FALSE(registry.LoadDirectories({dir / "file"}).ok());
}

TEST(PluginRegistry, RefusesADuplicateNameNamingBothFiles) {
  PluginRegistry registry;
  ASSERT_TRUE(LoadBuiltInPlugins(&registry).ok());
  const LoadedPlugin* hashed = registry.Find(PluginKind::kKeyScheme, "hashed");
  ASSERT_NE(hashed, nullptr);
  const std::string first = hashed->file;
  const Status s = registry.LoadFile(first);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "scheme 'hashed' is already provided by " + first)) << s.message();
  EXPECT_EQ(registry.plugins().size(), testing::kBuiltInPlugins);

  TempDir dir;
  std::filesystem::copy_file(first, dir / "libplanb_hashed_again.so");
  ASSERT_TRUE(registry.LoadDirectories({dir.path()}).ok());
  const PluginFailure f = OnlyFailure(registry);
  EXPECT_EQ(f.file, dir / "libplanb_hashed_again.so");
  EXPECT_TRUE(Contains(f.reason, "scheme 'hashed' is already provided by " + first)) << f.reason;
  EXPECT_EQ(registry.plugins().size(), testing::kBuiltInPlugins);
}

TEST(PluginRegistry, GetOfAMissingNameNamesTheFilesThatFailed) {
  PluginRegistry registry;
  ASSERT_TRUE(LoadBuiltInPlugins(&registry).ok());
  ASSERT_TRUE(registry.LoadDirectories({PLANB_FIXTURE_DIR "/wrong_abi"}).ok());
  const LoadedPlugin* found = nullptr;
  const Status s = registry.Get(PluginKind::kKeyScheme, "from_the_future", &found);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_TRUE(Contains(s.message(), "unknown scheme 'from_the_future' (known: ")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "hashed")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "; not loaded: " PLANB_FIXTURE_DIR "/wrong_abi/libplanb_wrong_abi.so (built "
                                    "against plugin SDK")) << s.message();
}

TEST(PluginRegistry, GetOfAnUnknownNameListsTheKnownOnes) {
  PluginRegistry registry;
  ASSERT_TRUE(LoadBuiltInPlugins(&registry).ok());
  const LoadedPlugin* found = nullptr;
  Status s = registry.Get(PluginKind::kKeyScheme, "sorted", &found);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_EQ(found, nullptr);
  EXPECT_TRUE(Contains(s.message(), "unknown scheme 'sorted'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "hashed")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "direct")) << s.message();
  EXPECT_FALSE(Contains(s.message(), "state")) << s.message();  // only names of the kind asked for

  s = registry.Get(PluginKind::kStoreType, "sketch", &found);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_TRUE(Contains(s.message(),
                       "unknown type 'sketch' (known: histogram, metric, ranged, session, state, temporal_ranged, temporal)"))
      << s.message();

  s = registry.Get(PluginKind::kStoreType, "state", &found);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_NE(found, nullptr);
  EXPECT_STREQ(found->descriptor->name, "state");
}

TEST(PluginRegistry, GetOnAnEmptyRegistrySaysNoneAreKnown) {
  PluginRegistry registry;
  const LoadedPlugin* found = nullptr;
  const Status s = registry.Get(PluginKind::kStoreType, "state", &found);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_TRUE(Contains(s.message(), "(known: none)")) << s.message();
}

}  // namespace
}  // namespace planb
