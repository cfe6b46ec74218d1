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
  EXPECT_EQ(state->descriptor->version, 1u);
  EXPECT_TRUE(state->descriptor->uses_key_scheme);
  EXPECT_EQ(state->descriptor->key_suffix_size, 0u);
  EXPECT_NE(state->descriptor->create_store, nullptr);
  EXPECT_TRUE(Contains(state->file, "state_store")) << state->file;
  EXPECT_NE(state->library, nullptr);

  const LoadedPlugin* hashed = registry.Find(PluginKind::kKeyScheme, "hashed");
  ASSERT_NE(hashed, nullptr);
  EXPECT_EQ(hashed->descriptor->version, 1u);
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

TEST(PluginRegistry, RefusesAnotherAbiVersion) {
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({PLANB_FIXTURE_DIR "/wrong_abi"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), PLANB_FIXTURE_DIR "/wrong_abi/libwrong_abi_fixture.so")) << s.message();
  const std::string theirs = std::to_string(kAbiMajor + 1) + "." + std::to_string(kAbiMinor);
  const std::string ours = std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor);
  EXPECT_TRUE(Contains(s.message(), "built against plugin SDK " + theirs)) << s.message();
  EXPECT_TRUE(Contains(s.message(), "this planb runs SDK " + ours)) << s.message();
  EXPECT_TRUE(registry.plugins().empty());
}

TEST(PluginRegistry, RefusesAStoreTypeWhoseKeySuffixLeavesNoRoomForAKey) {
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({PLANB_FIXTURE_DIR "/too_wide_suffix"});
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "store type 'too_wide_suffix' appends 511 bytes to each key, leaving no room for "
                                    "a key in LMDB's 511-byte keys")) << s.message();
  EXPECT_EQ(registry.Find(PluginKind::kStoreType, "too_wide_suffix"), nullptr);
}

TEST(PluginRegistry, RefusesALibraryWithoutEntryPoint) {
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({PLANB_FIXTURE_DIR "/no_entry_point"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), PLANB_FIXTURE_DIR "/no_entry_point/libno_entry_point_fixture.so")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "not a Plan B plugin")) << s.message();
  EXPECT_TRUE(registry.plugins().empty());
}

TEST(PluginRegistry, RefusesAFileThatIsNotAnElfLibrary) {
  TempDir dir;
  WriteFile(dir / "junk.so", "this is not a shared library\n");
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({dir.path()});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), dir / "junk.so")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "cannot be loaded")) << s.message();
}

TEST(PluginRegistry, IgnoresFilesWithoutSoExtension) {
  TempDir dir;
  WriteFile(dir / "README.txt", "not a plugin\n");
  WriteFile(dir / "junk.so.bak", "not a plugin either\n");
  PluginRegistry registry;
  const Status s = registry.LoadDirectories({dir.path()});
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(registry.plugins().empty());
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
