// planb keygen NAME [--dir DIR] through the real binary: the files, the output, and every refusal (exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "host/security/key_file.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::ReadFile;
using testing::RunPlanb;
using testing::TempDir;
using testing::WriteFile;

TEST(KeygenCommand, WritesTheKeyPairAndPrintsThePublicKey) {
  TempDir dir;
  const ProcessResult r = RunPlanb({"keygen", "node1a", "--dir", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string pub = ReadFile(dir / "node1a.pub");
  EXPECT_EQ(r.out, "secret key: " + dir / "node1a.key" + " (mode 0600; keep it on this machine only)\n" +
                       "public key: " + dir / "node1a.pub" + "\n" + pub);
  struct stat st;
  ASSERT_EQ(::stat((dir / "node1a.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  CurveKeyPair pair;
  ASSERT_TRUE(ReadKeyFile(dir / "node1a.key", &pair).ok());
  EXPECT_EQ(pair.public_key + "\n", pub);
}

TEST(KeygenCommand, DefaultsToTheCurrentDirectoryAndNeedsNoConfig) {
  TempDir dir;
  WriteFile(dir / "planb.ini", "this is not a config\n");  // would stop any command that reads it
  const ProcessResult r = RunPlanb({"keygen", "client-a"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "client-a.key"));
  EXPECT_TRUE(fs::exists(dir / "client-a.pub"));
  EXPECT_FALSE(fs::exists(dir / "planb-home"));
}

TEST(KeygenCommand, NeverOverwrites) {
  TempDir dir;
  ASSERT_EQ(RunPlanb({"keygen", "n", "--dir", dir.path()}).exit_code, 0);
  const std::string key = ReadFile(dir / "n.key");
  const std::string pub = ReadFile(dir / "n.pub");
  const ProcessResult r = RunPlanb({"keygen", "n", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "planb: keygen: " + dir / "n.key" + ": exists; nothing was written (keygen never overwrites)\n");
  EXPECT_EQ(ReadFile(dir / "n.key"), key);
  EXPECT_EQ(ReadFile(dir / "n.pub"), pub);
  fs::remove(dir / "n.key");  // only the .pub left: still refused, no .key made
  EXPECT_EQ(RunPlanb({"keygen", "n", "--dir", dir.path()}).exit_code, 2);
  EXPECT_FALSE(fs::exists(dir / "n.key"));
}

TEST(KeygenCommand, RefusesBadInput) {
  TempDir dir;
  ProcessResult r = RunPlanb({"keygen", "../x", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'../x' is not a key name"));
  r = RunPlanb({"keygen", "a\nb", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'a\\nb' is not a key name"));
  r = RunPlanb({"keygen", "", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  r = RunPlanb({"keygen", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'keygen' takes NAME, got 0 argument(s)"));
  r = RunPlanb({"keygen", "a", "b", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  r = RunPlanb({"keygen", "a", "--dir", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dir is empty"));
  r = RunPlanb({"keygen", "a", "--dir", dir / "absent"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(dir / "absent/a.key: cannot create"));
  r = RunPlanb({"keygen", "a", "--dir", dir.path(), "--remote"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("option --remote does not apply to 'keygen'"));
  r = RunPlanb({"lookup", "m", "k", "--dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("option --dir does not apply to 'lookup'"));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// keygen's files used as the config names them: accepted; a malformed client section stops a command with exit 2.
TEST(KeygenCommand, ItsFilesConfigureKeysAndRights) {
  TempDir dir;
  ASSERT_EQ(RunPlanb({"keygen", "self", "--dir", dir.path()}).exit_code, 0);
  ASSERT_EQ(RunPlanb({"keygen", "loader", "--dir", dir.path()}).exit_code, 0);
  std::string loader_pub = ReadFile(dir / "loader.pub");
  loader_pub.pop_back();  // the newline
  std::string self_pub = ReadFile(dir / "self.pub");
  self_pub.pop_back();
  const std::string base = "home = home\nsecret_key_file = self.key\nnode_name = self\n[node.self]\n"
                           "endpoint = tcp://127.0.0.1:1\npublic_key = " + self_pub +
                           "\n[map.a]\ntype = state\n[client.loader]\npublic_key = " + loader_pub + "\n";
  WriteFile(dir / "good.ini", base + "allow = upload, snapshot\nmaps = a\n");
  ProcessResult r = RunPlanb({"--config", dir / "good.ini", "stores"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  WriteFile(dir / "bad.ini", base + "allow = upload, delete\n");
  r = RunPlanb({"--config", dir / "bad.ini", "stores"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "planb: " + dir / "bad.ini" +
                       ": [client.loader]: allow: 'delete' is not a right (upload, read, snapshot)\n");
}

}  // namespace
}  // namespace planb
