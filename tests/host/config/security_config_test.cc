// secret_key_file, allow_plaintext, [node.X] public_key and [client.NAME] sections: what is read, and every
// malformed version refused naming the file, the section and the key.
#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "host/config/config.h"
#include "host/security/key_file.h"
#include "support/test_env.h"

namespace planb {
namespace {

using testing::TempDir;
using testing::WriteFile;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// A valid key holding `c` (last of each 5-character group: a value below 85, always in range).
std::string KeyWith(char c, char fill = '0') {
  std::string key;
  for (int group = 0; group < 8; ++group) key += std::string(4, fill) + c;
  return key;
}

class SecurityConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string key_path;
    std::string pub_path;
    ASSERT_TRUE(WriteKeyPair(dir_.path(), "self", &self_, &key_path, &pub_path).ok());
  }

  // The config text with a valid secret_key_file (relative: resolved against the base dir) and two maps.
  std::string Base() const { return "secret_key_file = self.key\n[map.a]\ntype = state\n[map.b]\ntype = state\n"; }

  Status Parse(const std::string& text, Config* config) const {
    return ParseConfig("planb.ini", text, dir_.path(), config);
  }
  std::string ErrorOf(const std::string& text) const {
    Config config;
    const Status s = Parse(text, &config);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_TRUE(config.cluster.clients.empty());
    return s.message();
  }

  TempDir dir_;
  CurveKeyPair self_;
  const std::string k1_ = KeyWith('#');
  const std::string k2_ = KeyWith('=', '1');
  const std::string k3_ = KeyWith('[', '2');
};

TEST_F(SecurityConfigTest, ReadsKeysAndRights) {
  Config config;
  const Status s = Parse("allow_plaintext = true\n" + Base() +
                                  "[node.n1]\nendpoint = tcp://127.0.0.1:7601\npublic_key = " + k3_ + "  # n1.pub\n"
                                  "[client.loader-1]\npublic_key = " + k1_ + ", " + k2_ + "\nallow = upload, read\n"
                                  "[client.reader]\npublic_key=" + self_.public_key + "\nallow=snapshot\nmaps = B\n",
                         &config);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(config.cluster.own_key.has_value());
  EXPECT_EQ(config.cluster.own_key->file, dir_ / "self.key");
  EXPECT_EQ(config.cluster.own_key->keys.secret_key, self_.secret_key);
  EXPECT_EQ(config.cluster.own_key->keys.public_key, self_.public_key);
  EXPECT_TRUE(config.cluster.allow_plaintext);
  EXPECT_EQ(config.cluster.nodes.at("n1").public_key, k3_);
  const ClientConfig& loader = config.cluster.clients.at("loader-1");
  EXPECT_EQ(loader.public_keys, (std::vector<std::string>{k1_, k2_}));
  EXPECT_EQ(loader.rights, static_cast<uint32_t>(Right::kUpload) | static_cast<uint32_t>(Right::kRead));
  EXPECT_FALSE(loader.maps.has_value());
  EXPECT_TRUE(loader.Allows(Right::kUpload, "a"));
  EXPECT_TRUE(loader.Allows(Right::kRead, "anything"));
  EXPECT_FALSE(loader.Allows(Right::kSnapshot, "a"));
  const ClientConfig& reader = config.cluster.clients.at("reader");
  EXPECT_EQ(reader.maps, (std::set<std::string>{"b"}));
  EXPECT_TRUE(reader.Allows(Right::kSnapshot, "B"));
  EXPECT_FALSE(reader.Allows(Right::kSnapshot, "a"));
  EXPECT_FALSE(reader.Allows(Right::kRead, "b"));
  EXPECT_EQ(config.cluster.FindClientByKey(k2_), &loader);
  EXPECT_EQ(config.cluster.FindClientByKey(self_.public_key), &reader);
  EXPECT_EQ(config.cluster.FindClientByKey(k3_), nullptr);
  EXPECT_EQ(config.cluster.FindClientByKey(""), nullptr);
}

TEST_F(SecurityConfigTest, DefaultsAreNoKeysAndNoPlaintextOverride) {
  Config config;
  ASSERT_TRUE(Parse("[map.a]\ntype = state\n", &config).ok());
  EXPECT_FALSE(config.cluster.own_key.has_value());
  EXPECT_FALSE(config.cluster.allow_plaintext);
  EXPECT_TRUE(config.cluster.clients.empty());
  ASSERT_TRUE(Parse("allow_plaintext = false\n[node.n]\nendpoint = tcp://h:1\n", &config).ok());
  EXPECT_FALSE(config.cluster.nodes.at("n").public_key.has_value());
}

TEST_F(SecurityConfigTest, ReadsKeysHoldingEveryZ85SpecialCharacter) {
  for (char c : std::string(".-:+=^!/*?&<>()[]{}@%$#")) {
    const std::string key = KeyWith(c);
    Config config;
    const Status s = Parse(Base() + "[node.n]\nendpoint = tcp://h:1\npublic_key = " + key + "\n[client.c]\n" +
                               "public_key = " + KeyWith(c, '1') + "," + key + " # comment\nallow = read\n",
                           &config);
    ASSERT_TRUE(s.ok()) << c << ": " << s.message();
    EXPECT_EQ(config.cluster.nodes.at("n").public_key, key);
    EXPECT_EQ(config.cluster.clients.at("c").public_keys, (std::vector<std::string>{KeyWith(c, '1'), key}));
  }
}

TEST_F(SecurityConfigTest, RefusesMalformedSecretKeyFile) {
  const std::string maps = "[map.a]\ntype = state\n";
  EXPECT_EQ(ErrorOf("secret_key_file =\n"), "planb.ini: secret_key_file: empty value");
  Config config;
  const Status absent = Parse("secret_key_file = absent.key\n", &config);
  EXPECT_EQ(absent.code(), Code::kIOError);
  EXPECT_TRUE(Contains(absent.message(), "planb.ini: secret_key_file: " + dir_ / "absent.key" + ": cannot open"))
      << absent.message();
  EXPECT_EQ(ErrorOf("secret_key_file = self.key\nsecret_key_file = self.key\n"),
            "planb.ini: secret_key_file: given twice");
  WriteFile(dir_ / "pub.key", self_.public_key + "\n");
  ::chmod((dir_ / "pub.key").c_str(), 0600);
  EXPECT_TRUE(Contains(ErrorOf("secret_key_file = self.pub\n"), "self.pub: mode 06"));  // keygen made it 0644
  EXPECT_TRUE(Contains(ErrorOf("secret_key_file = pub.key\n"),
                       "planb.ini: secret_key_file: " + dir_ / "pub.key" + ": line 1: not 'public_key = Z85'"));
  ::chmod((dir_ / "self.key").c_str(), 0640);
  EXPECT_EQ(ErrorOf(Base()), "planb.ini: secret_key_file: " + dir_ / "self.key" +
                                 ": mode 0640 lets others read the secret key; it must be 0600 or narrower (chmod 600 " +
                                 dir_ / "self.key" + ")");
}

TEST_F(SecurityConfigTest, RefusesMalformedAllowPlaintext) {
  for (const char* bad : {"yes", "", "TRUE", "1", "true#"}) {
    EXPECT_EQ(ErrorOf(std::string("allow_plaintext = ") + bad + "\n"),
              std::string("planb.ini: allow_plaintext: '") + bad + "' is not true or false")
        << bad;
  }
}

TEST_F(SecurityConfigTest, RefusesMalformedNodePublicKey) {
  const std::string node = Base() + "[node.n]\nendpoint = tcp://h:1\npublic_key = ";
  EXPECT_EQ(ErrorOf(node + "short\n"), "planb.ini: [node.n]: public_key: 'short' is 5 characters, not a Z85 key of 40");
  EXPECT_EQ(ErrorOf(node + "\n"), "planb.ini: [node.n]: public_key: '' is 0 characters, not a Z85 key of 40");
  EXPECT_EQ(ErrorOf(node + k1_ + ", " + k2_ + "\n"),
            "planb.ini: [node.n]: public_key: '" + k1_ + ", " + k2_ + "' is 82 characters, not a Z85 key of 40");
  std::string bad_char = k1_;
  bad_char[3] = '~';
  EXPECT_EQ(ErrorOf(node + bad_char + "\n"), "planb.ini: [node.n]: public_key: '" + bad_char +
                                                 "' has a character outside the Z85 alphabet at position 4");
  const std::string overflow = "#####" + std::string(35, '0');
  EXPECT_EQ(ErrorOf(node + overflow + "\n"),
            "planb.ini: [node.n]: public_key: '" + overflow + "' is not valid Z85 (a group encodes more than 32 bits)");
  EXPECT_EQ(ErrorOf(node + k1_ + "\npublic_key = " + k1_ + "\n"), "planb.ini: [node.n]: public_key: given twice");
  // Every node has a key or none has.
  EXPECT_EQ(ErrorOf(node + k1_ + "\n[node.m]\nendpoint = tcp://h:2\n"),
            "planb.ini: [node.m]: public_key: missing, while [node.n] has one (once keys are configured every "
            "connection is authenticated)");
  // A node's key without this node's own.
  EXPECT_EQ(ErrorOf("[node.n]\nendpoint = tcp://h:1\npublic_key = " + k1_ + "\n"),
            "planb.ini: secret_key_file: missing: [node.n] has a public_key, and this node needs its own key pair to "
            "use it (planb keygen)");
}

TEST_F(SecurityConfigTest, RefusesMalformedClientSections) {
  const std::string c = Base() + "[client.c]\n";
  const std::string key = "public_key = " + k1_ + "\n";
  const auto error = [&](const std::string& body) { return ErrorOf(c + body); };
  EXPECT_EQ(error("allow = read\n"), "planb.ini: [client.c]: public_key: missing (the client's NAME.pub from planb keygen)");
  EXPECT_EQ(error(key), "planb.ini: [client.c]: allow: missing (any of upload, read, snapshot)");
  EXPECT_EQ(error(key + "allow =\n"), "planb.ini: [client.c]: allow: empty value");
  EXPECT_EQ(error(key + "allow = upload, write\n"), "planb.ini: [client.c]: allow: 'write' is not a right (upload, read, snapshot)");
  EXPECT_EQ(error(key + "allow = Upload\n"), "planb.ini: [client.c]: allow: 'Upload' is not a right (upload, read, snapshot)");
  EXPECT_EQ(error(key + "allow = read, read\n"), "planb.ini: [client.c]: allow: 'read, read' lists 'read' twice");
  EXPECT_EQ(error(key + "allow = read,\n"), "planb.ini: [client.c]: allow: 'read,' has an empty item (a stray comma)");
  EXPECT_EQ(error(key + "allow = upload read\n"),
            "planb.ini: [client.c]: allow: 'upload read' is not a right (upload, read, snapshot)");
  EXPECT_EQ(error(key + "allow = read\nallow = upload\n"), "planb.ini: [client.c]: allow: given twice");
  EXPECT_EQ(error("public_key =\nallow = read\n"), "planb.ini: [client.c]: public_key: empty value");
  EXPECT_EQ(error("public_key = " + k1_ + ",,\nallow = read\n"),
            "planb.ini: [client.c]: public_key: '" + k1_ + ",,' has an empty item (a stray comma)");
  EXPECT_EQ(error("public_key = " + k1_ + ", nope\nallow = read\n"),
            "planb.ini: [client.c]: public_key: 'nope' is 4 characters, not a Z85 key of 40");
  EXPECT_EQ(error("public_key = " + k1_ + "," + k1_ + "\nallow = read\n"),
            "planb.ini: [client.c]: public_key: '" + k1_ + "," + k1_ + "' lists '" + k1_ + "' twice");
  std::string nine;
  for (char f : std::string("123456789")) nine += std::string(nine.empty() ? "" : ",") + KeyWith('#', f);
  EXPECT_EQ(error("public_key = " + nine + "\nallow = read\n"),
            "planb.ini: [client.c]: public_key: 9 keys; at most 8 (two for a rotation)");
  EXPECT_EQ(error(key + "allow = read\nmaps =\n"), "planb.ini: [client.c]: maps: empty value");
  EXPECT_EQ(error(key + "allow = read\nmaps = a, zz\n"),
            "planb.ini: [client.c]: maps: 'zz' is not a configured map (no [map.zz])");
  EXPECT_EQ(error(key + "allow = read\nmaps = a,,b\n"), "planb.ini: [client.c]: maps: 'a,,b' has an empty item (a stray comma)");
  EXPECT_EQ(error(key + "allow = read\nrights = all\n"),
            "planb.ini: [client.c]: rights: unknown key (known: public_key, allow, maps)");
  EXPECT_EQ(ErrorOf(Base() + "[client.bad/name]\n" + key + "allow = read\n"),
            "planb.ini: [client.bad/name]: invalid client name 'bad/name' (letters, digits, '.', '-', '_')");
  EXPECT_EQ(ErrorOf(Base() + "[client.]\n"), "planb.ini: [client.]: section needs a name, as in [client.NAME]");
  EXPECT_EQ(ErrorOf(c + key + "allow = read\n[client.c]\n" + key + "allow = read\n"),
            "planb.ini: [client.c]: section given twice");
}

TEST_F(SecurityConfigTest, RefusesAKeyInTwoClients) {
  EXPECT_EQ(ErrorOf(Base() + "[client.a]\npublic_key = " + k1_ + "\nallow = read\n[client.b]\npublic_key = " + k2_ +
                    ", " + k1_ + "\nallow = upload\n"),
            "planb.ini: [client.b]: public_key: '" + k1_ + "' is also [client.a]'s; a key names one client");
}

TEST_F(SecurityConfigTest, RefusesClientsWithoutOwnKey) {
  EXPECT_EQ(ErrorOf("[client.a]\npublic_key = " + k1_ + "\nallow = read\n"),
            "planb.ini: secret_key_file: missing: [client.a] is configured, and this node needs its own key pair to "
            "use it (planb keygen)");
}

TEST_F(SecurityConfigTest, RefusesClientsWithoutNodeKeys) {
  EXPECT_EQ(ErrorOf(Base() + "[node.n1]\nendpoint = tcp://h:1\n[client.a]\npublic_key = " + k1_ + "\nallow = read\n"),
            "planb.ini: [client.a]: clients are configured but no [node.NAME] has a public_key: without the nodes' "
            "keys no connection is authenticated (add public_key to every [node.NAME])");
}

// A storage node serves with secret_key_file: its [node.SELF] public_key must be that key's, or no client could
// ever connect to it.
TEST_F(SecurityConfigTest, RefusesOwnNodeKeyOtherThanTheSecretKeyFiles) {
  const std::string top = "node_name = n1\nnode_list = ,n1\n";
  const std::string nodes = "[node.n1]\nendpoint = tcp://h:1\npublic_key = ";
  EXPECT_EQ(ErrorOf(top + Base() + nodes + k1_ + "\n"),
            "planb.ini: [node.n1]: public_key: not the public key of secret_key_file " + dir_ / "self.key" + " (" +
                self_.public_key + "): this node would not be able to prove its identity to its clients");
  Config config;
  const Status s = Parse(top + Base() + nodes + self_.public_key + "\n", &config);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(config.cluster.curve());
  const std::optional<CurveClientKeys> keys = config.cluster.KeysFor("n1");
  ASSERT_TRUE(keys.has_value());
  EXPECT_EQ(keys->server_public_key, self_.public_key);
  EXPECT_EQ(keys->own.secret_key, self_.secret_key);
}

}  // namespace
}  // namespace planb
