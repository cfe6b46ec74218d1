// Plugins of other SDK versions: a 7.0 store type (tests/fixtures/sdk_7_0_set.cc) loads into this 7.1 host and
// works end to end; a newer minor and malformed field declarations are refused with clear reasons.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "host/cli/cli_test_env.h"
#include "host/plugin_host/descriptor_copy.h"
#include "host/plugin_host/plugin_registry.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::CliEnv;
using testing::ProcessResult;

const std::string kSetDir = PLANB_FIXTURE_DIR "/sdk_7_0_set";

TEST(SdkCompat, APluginOfSdk70LoadsWithItsFieldsReadAtItsStride) {
  PluginRegistry registry;
  ASSERT_TRUE(registry.LoadDirectories({kSetDir}).ok());
  EXPECT_TRUE(registry.failures().empty()) << registry.FailuresText();
  const LoadedPlugin* member = registry.Find(PluginKind::kStoreType, "member");
  ASSERT_NE(member, nullptr);
  EXPECT_EQ(member->abi_minor, 0u);
  const PluginDescriptor& d = *member->descriptor;
  EXPECT_EQ(d.abi_minor, 0u);
  EXPECT_EQ(d.field_spec_size, sizeof(FieldSpec));  // the host's copy, at the host's stride
  ASSERT_EQ(d.field_count, 2u);
  // 7.0's FieldSpec has no flags: read at 7.1's stride, the second name would be garbage.
  EXPECT_STREQ(d.fields[0].name, "Key");
  EXPECT_EQ(d.fields[0].field, RowField::kKey);
  EXPECT_STREQ(d.fields[1].name, "Member");
  EXPECT_EQ(d.fields[1].kind, FieldKind::kText);
  EXPECT_EQ(d.fields[1].field, RowField::kValue);
  EXPECT_EQ(d.fields[0].flags, 0u);
  EXPECT_EQ(d.fields[1].flags, 0u);
}

// JSON values came with 7.8: a store type built before would read such a row back as corrupt (its inline value
// checks know two value types), so a load of JSON values into its map is refused naming the plugin, nothing
// staged; text values into the same map still load.
TEST(SdkCompat, JsonValuesAreRefusedForAStoreTypeBuiltBeforeTheyExisted) {
  CliEnv env("plugin_dir = " + kSetDir + "\n[map.members]\ntype = member\n");
  const std::string json = env.Write("m.jsonl", "{\"k\":\"alice\",\"v\":{\"role\":\"admin\"}}\n");
  ProcessResult r = env.Run({"load", "--format", "jsonl", "--map", "members", "--key", "k", "--value", "v", json});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("map members: store type 'member' (" + kSetDir));
  EXPECT_THAT(r.err, HasSubstr("was built against SDK 7.0, before JSON values (7.8): rebuild it, or load the "
                               "values as text"));
  EXPECT_THAT(r.err, HasSubstr("nothing was staged or merged"));
  EXPECT_EQ(env.Lookup("members", "alice").exit_code, 2) << "no data: nothing merged";
  const std::string text = env.Write("t.jsonl", "{\"k\":\"alice\",\"v\":\"admin\"}\n");
  r = env.Run({"load", "--format", "jsonl", "--map", "members", "--key", "k", "--value", "v", text});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(SdkCompat, APluginOfSdk70LoadsLooksUpAndQueriesThroughTheCli) {
  CliEnv env("plugin_dir = " + kSetDir + "\n[map.members]\ntype = member\n");
  const std::string input = env.Write(
      "in.xml", testing::ReferenceData(testing::Ref("members", "alice", "") + "\n" +
                                       testing::Ref("members", "bob", "ignored")));
  ProcessResult r = env.Load({input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = env.Lookup("members", "alice");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("present"));
  r = env.Lookup("members", "bob");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("present"));
  r = env.Lookup("members", "carol");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  r = env.Run({"query", "members", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Key,Member"));
  EXPECT_THAT(r.out, HasSubstr("alice,present"));
  EXPECT_THAT(r.out, HasSubstr("bob,present"));
  EXPECT_EQ(r.err, "");
}

// The one failure of loading the fixture directory `name`.
std::string RefusalOf(const std::string& name) {
  PluginRegistry registry;
  EXPECT_TRUE(registry.LoadDirectories({std::string(PLANB_FIXTURE_DIR) + "/" + name}).ok());
  EXPECT_TRUE(registry.plugins().empty());
  EXPECT_EQ(registry.failures().size(), 1u);
  return registry.failures().empty() ? "" : registry.failures().front().reason;
}

// 7.10's answers_by_stored_keys lies in what was padding in a 7.9 descriptor, whose bytes a plugin's compiler
// leaves as it likes: read only from plugins built against 7.10 or later.
TEST(SdkCompat, AnswersByStoredKeysIsReadOnlyFromPluginsOf710) {
  static const FieldSpec kFields[] = {{"Key", FieldKind::kText, RowField::kKey}};
  PluginDescriptor raw;
  raw.kind = PluginKind::kStoreType;
  raw.name = "padded";
  raw.fields = kFields;
  raw.field_count = 1;
  raw.create_store = [](const PluginArgs*, ErrorBuffer*) -> Store* { return nullptr; };
  raw.destroy_store = [](Store*) {};
  raw.answers_by_stored_keys = true;  // a 7.9 plugin's padding byte that happens to be set
  for (uint32_t minor : {9u, 10u}) {
    raw.abi_minor = minor;
    std::unique_ptr<DescriptorCopy> copy;
    const Status s = DescriptorCopy::Copy(&raw, "libplanb_padded.so", &copy);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(copy->descriptor().answers_by_stored_keys, minor >= 10) << "7." << minor;
  }
}

TEST(SdkCompat, RefusesANewerMinorNamingThePluginAndBothVersions) {
  const std::string reason = RefusalOf("newer_minor");
  const std::string theirs = std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor + 1);
  const std::string ours = std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor);
  EXPECT_THAT(reason, HasSubstr("built against plugin SDK " + theirs + ", newer than this planb's SDK " + ours));
  EXPECT_THAT(reason, HasSubstr("upgrade planb or rebuild the plugin"));
}

TEST(SdkCompat, RefusesAFieldOfAnUnknownKind) {
  EXPECT_THAT(RefusalOf("unknown_field_kind"),
              HasSubstr("store type 'bad_descriptor': its field 'Odd' has unknown kind 99"));
}

TEST(SdkCompat, RefusesAFieldNameDeclaredTwiceInAnyCase) {
  EXPECT_THAT(RefusalOf("duplicate_field"),
              HasSubstr("store type 'bad_descriptor' declares field 'KEY' twice (names are case-insensitive)"));
}

TEST(SdkCompat, RefusesAFieldBoundToAnUnknownRowMember) {
  EXPECT_THAT(RefusalOf("unknown_row_field"),
              HasSubstr("store type 'bad_descriptor': its field 'Odd' is bound to Row member 77, which is unknown"));
}

}  // namespace
}  // namespace planb
