#include "host/security/key_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

uint32_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

Status Write(const std::string& dir, const std::string& name, CurveKeyPair* pair) {
  std::string key_path;
  std::string pub_path;
  return WriteKeyPair(dir, name, pair, &key_path, &pub_path);
}

TEST(KeyFile, WritesSecretAndPublicFiles) {
  TempDir dir;
  CurveKeyPair pair;
  std::string key_path;
  std::string pub_path;
  ASSERT_TRUE(WriteKeyPair(dir.path(), "node1a", &pair, &key_path, &pub_path).ok());
  EXPECT_EQ(key_path, dir / "node1a.key");
  EXPECT_EQ(pub_path, dir / "node1a.pub");
  EXPECT_EQ(ModeOf(key_path), 0600u);
  EXPECT_EQ(ReadFile(pub_path), pair.public_key + "\n");
  const std::string text = ReadFile(key_path);
  EXPECT_TRUE(Contains(text, "\npublic_key = " + pair.public_key + "\n")) << text;
  EXPECT_TRUE(Contains(text, "\nsecret_key = " + pair.secret_key + "\n"));
  EXPECT_FALSE(Contains(ReadFile(pub_path), pair.secret_key));
  // The public key is the secret's own.
  std::string derived;
  ASSERT_TRUE(DerivePublicKey(pair.secret_key, &derived).ok());
  EXPECT_EQ(derived, pair.public_key);
  CurveKeyPair read;
  const Status s = ReadKeyFile(key_path, &read);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(read.public_key, pair.public_key);
  EXPECT_EQ(read.secret_key, pair.secret_key);
}

TEST(KeyFile, SecretIs0600WhateverTheUmask) {
  TempDir dir;
  const mode_t old = ::umask(0);
  CurveKeyPair pair;
  const Status s = Write(dir.path(), "k", &pair);
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ModeOf(dir / "k.key"), 0600u);
  EXPECT_EQ(ModeOf(dir / "k.pub"), 0644u);
}

TEST(KeyFile, RefusesWhenEitherFileExistsWritingNothing) {
  for (const std::string existing : {"k.key", "k.pub"}) {
    TempDir dir;
    WriteFile(dir / existing, "before\n");
    CurveKeyPair pair;
    const Status s = Write(dir.path(), "k", &pair);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_EQ(s.message(), dir / existing + ": exists; nothing was written (keygen never overwrites)");
    EXPECT_EQ(ReadFile(dir / existing), "before\n");
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir.path())) files += entry.is_regular_file() ? 1 : 0;
    EXPECT_EQ(files, 1u) << existing;
  }
  // A dangling symlink counts as existing: nothing is written through it.
  TempDir dir;
  fs::create_symlink(dir / "elsewhere", dir / "k.key");
  CurveKeyPair pair;
  EXPECT_FALSE(Write(dir.path(), "k", &pair).ok());
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
  EXPECT_FALSE(fs::exists(dir / "k.pub"));
}

TEST(KeyFile, RefusesBadNames) {
  TempDir dir;
  for (const std::string& name : std::vector<std::string>{"", "a/b", "../up", ".", "..", ".hidden", "a b", "a\nb",
                                                          std::string("a\0b", 3), "caf\xc3\xa9", "a:b",
                                                          std::string(201, 'a')}) {
    CurveKeyPair pair;
    const Status s = Write(dir.path(), name, &pair);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << name;
    EXPECT_TRUE(Contains(s.message(), "is not a key name")) << s.message();
    EXPECT_FALSE(Contains(s.message(), "\n")) << s.message();
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_TRUE(IsValidKeyName("node-1a_B.2"));
  EXPECT_TRUE(IsValidKeyName(std::string(200, 'a')));
}

TEST(KeyFile, RefusesAnUnwritableOrMissingDirectory) {
  TempDir dir;
  CurveKeyPair pair;
  Status s = Write(dir / "absent", "k", &pair);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_TRUE(Contains(s.message(), dir / "absent/k.key: cannot create")) << s.message();
  s = Write(dir / "new\nline", "k", &pair);  // a path from outside is escaped in the message
  EXPECT_TRUE(Contains(s.message(), "new\\nline/k.key: cannot create")) << s.message();
  EXPECT_FALSE(Contains(s.message(), "\n"));
  // Not a directory: works as root too (a chmod 0500 directory does not stop root).
  WriteFile(dir / "file", "x");
  s = Write(dir / "file", "k", &pair);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_TRUE(Contains(s.message(), "cannot create")) << s.message();
  if (::geteuid() != 0) {
    fs::create_directory(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    s = Write(dir / "ro", "k", &pair);
    EXPECT_EQ(s.code(), Code::kIOError);
    EXPECT_TRUE(fs::is_empty(dir / "ro"));
  }
}

// A key file written by hand (or damaged): every malformed version is refused, naming the file and the line.
class ReadKeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(GenerateKeyPair(&pair_).ok()); }

  std::string ErrorOf(const std::string& text, mode_t mode = 0600) {
    const std::string path = dir_ / "x.key";
    fs::remove(path);
    WriteFile(path, text);
    ::chmod(path.c_str(), mode);
    CurveKeyPair read;
    const Status s = ReadKeyFile(path, &read);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_TRUE(read.secret_key.empty());
    EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
    EXPECT_FALSE(Contains(s.message(), pair_.secret_key)) << "the secret is never in a message";
    return s.message().substr(path.size() + 2);
  }
  std::string Pub() const { return "public_key = " + pair_.public_key + "\n"; }
  std::string Sec() const { return "secret_key = " + pair_.secret_key + "\n"; }

  TempDir dir_;
  CurveKeyPair pair_;
};

TEST_F(ReadKeyFileTest, ReadsCommentsCrlfAndEitherOrder) {
  const std::string path = dir_ / "x.key";
  WriteFile(path, "# mine\r\n\r\n" + Sec() + Pub());
  ::chmod(path.c_str(), 0400);
  CurveKeyPair read;
  ASSERT_TRUE(ReadKeyFile(path, &read).ok());
  EXPECT_EQ(read.secret_key, pair_.secret_key);
}

TEST_F(ReadKeyFileTest, RefusesMalformedFiles) {
  EXPECT_EQ(ErrorOf(Pub()), "no secret_key line (is this a .pub file?)");
  EXPECT_EQ(ErrorOf(pair_.public_key + "\n"), "line 1: not 'public_key = Z85' or 'secret_key = Z85'");
  EXPECT_EQ(ErrorOf(Sec()), "no public_key line");
  EXPECT_EQ(ErrorOf(Pub() + Sec() + Sec()), "line 3: secret_key given twice");
  EXPECT_EQ(ErrorOf(Pub() + "secret_key = short\n"), "line 2: secret_key is 5 characters, not a Z85 key of 40");
  EXPECT_EQ(ErrorOf(Pub() + "secret = x\n"), "line 2: not 'public_key = Z85' or 'secret_key = Z85'");
  EXPECT_EQ(ErrorOf("\n"), "no secret_key line (is this a .pub file?)");
  CurveKeyPair other;
  ASSERT_TRUE(GenerateKeyPair(&other).ok());
  EXPECT_EQ(ErrorOf("public_key = " + other.public_key + "\n" + Sec()),
            "public_key is not the public key of secret_key");
}

TEST_F(ReadKeyFileTest, RefusesKeysOthersCanRead) {
  EXPECT_EQ(ErrorOf(Pub() + Sec(), 0640), "mode 0640 lets others read the secret key; it must be 0600 or narrower "
                                           "(chmod 600 " + dir_ / "x.key" + ")");
  EXPECT_TRUE(Contains(ErrorOf(Pub() + Sec(), 0604), "mode 0604 lets others read"));
  EXPECT_TRUE(Contains(ErrorOf(Pub() + Sec(), 0610), "mode 0610"));
}

TEST_F(ReadKeyFileTest, RefusesOversizedMissingAndNonRegularFiles) {
  EXPECT_EQ(ErrorOf(std::string(4097, '#')), "4097 bytes: not a key file (at most 4096)");
  CurveKeyPair read;
  Status s = ReadKeyFile(dir_ / "absent.key", &read);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_TRUE(Contains(s.message(), "absent.key: cannot open")) << s.message();
  s = ReadKeyFile(dir_.path(), &read);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "not a regular file")) << s.message();
}

TEST_F(ReadKeyFileTest, AFifoWithNoWriterIsRefusedAtOnceNotWaitedOn) {
  // open() of a FIFO blocks until a writer comes; the reader opens without blocking and checks the type first.
  // Before that, this test hung until ctest's timeout.
  const std::string fifo = dir_ / "fifo.key";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CurveKeyPair read;
  const Status s = ReadKeyFile(fifo, &read);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), fifo + ": not a regular file");
}

}  // namespace
}  // namespace planb
