// The storage-node keys of the config: node_name, node_list, [node.NAME] endpoint, the upload settings and
// synchronise_merge, and how each malformed value is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <string_view>

#include "host/config/config.h"

namespace planb {
namespace {

Status Parse(std::string_view text, Config* config) { return ParseConfig("planb.ini", text, "/etc/planb", config); }

std::string ErrorOf(std::string_view text) {
  Config config;
  const Status status = Parse(text, &config);
  EXPECT_FALSE(status.ok()) << text;
  return status.message();
}

const char kTwoNodes[] =
    "node_name = node1a\n"
    "node_list = ,node1a,node2a\n"
    "[node.node1a]\nendpoint = tcp://127.0.0.1:7601\n"
    "[node.node2a]\nendpoint = tcp://10.0.0.2:7601\n";

TEST(ClusterConfig, DefaultsAreASingleNodeNamedAfterTheHost) {
  Config config;
  ASSERT_TRUE(Parse("", &config).ok());
  char host[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(config.cluster.node_name, host);
  EXPECT_TRUE(config.cluster.single_node());
  EXPECT_TRUE(config.cluster.IsStorageNode());
  EXPECT_EQ(config.cluster.request_timeout_ms, 5000);
  EXPECT_EQ(config.cluster.send_part_attempts, 3);
  EXPECT_EQ(config.cluster.send_part_retry_delay_ms, 10000);
  EXPECT_EQ(config.cluster.max_batch_size, uint64_t{64} << 30);
}

TEST(ClusterConfig, ReadsTheNodeListInOrderWithEndpoints) {
  Config config;
  ASSERT_TRUE(Parse(kTwoNodes, &config).ok());
  EXPECT_EQ(config.cluster.node_list, (std::vector<std::string>{"node1a", "node2a"}));
  EXPECT_EQ(config.cluster.nodes.at("node2a").endpoint, "tcp://10.0.0.2:7601");
  EXPECT_TRUE(config.cluster.IsStorageNode());
  ASSERT_TRUE(Parse(std::string(kTwoNodes).replace(12, 6, "proc1"), &config).ok());
  EXPECT_EQ(config.cluster.node_name, "proc1");
  EXPECT_FALSE(config.cluster.IsStorageNode());
}

TEST(ClusterConfig, ReadsUploadSettingsWithUnits) {
  Config config;
  ASSERT_TRUE(Parse("request_timeout = 250ms\nsend_part_attempts = 5\nsend_part_retry_delay = 1m\n"
                    "max_batch_size = 1GiB\n[map.a]\ntype = state\nsynchronise_merge = true\n",
                    &config)
                  .ok());
  EXPECT_EQ(config.cluster.request_timeout_ms, 250);
  EXPECT_EQ(config.cluster.send_part_attempts, 5);
  EXPECT_EQ(config.cluster.send_part_retry_delay_ms, 60000);
  EXPECT_EQ(config.cluster.max_batch_size, uint64_t{1} << 30);
  EXPECT_TRUE(config.maps.at("a").synchronise_merge);
  ASSERT_TRUE(Parse("request_timeout = PT2S\n", &config).ok());  // ISO-8601 durations too (iso_time.h)
  EXPECT_EQ(config.cluster.request_timeout_ms, 2000);
}

TEST(ClusterConfig, RefusesMalformedNodeLists) {
  EXPECT_EQ(ErrorOf("node_list = node1a,node2a\n"),
            "planb.ini: node_list: 'node1a,node2a' must start with a comma, as in ,node1a,node2a");
  EXPECT_NE(ErrorOf("node_list = ,node1a,,node2a\n").find("'' is not a node name"), std::string::npos);
  EXPECT_NE(ErrorOf("node_list = ,a b\n").find("'a b' is not a node name"), std::string::npos);
  EXPECT_NE(ErrorOf("node_list = ,node1a,\n").find("'' is not a node name"), std::string::npos);
  EXPECT_NE(ErrorOf("node_list = ,n,n\n[node.n]\nendpoint = tcp://h:1\n").find("node 'n' listed twice"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("node_list = ,n1\n"),
            "planb.ini: node_list: node 'n1' has no [node.n1] section with an endpoint");
  EXPECT_NE(ErrorOf("node_list = ,n1\nnode_list = ,n1\n").find("node_list: given twice"), std::string::npos);
}

TEST(ClusterConfig, RefusesMalformedNodeSections) {
  EXPECT_EQ(ErrorOf("[node.n1]\nendpoint = 10.0.0.1:7601\n"),
            "planb.ini: [node.n1]: endpoint: '10.0.0.1:7601' is not tcp://HOST:PORT (port 1..65535)");
  EXPECT_NE(ErrorOf("[node.n1]\nendpoint = tcp://h:70000\n").find("is not tcp://HOST:PORT"), std::string::npos);
  EXPECT_NE(ErrorOf("[node.n1]\nendpoint = tcp://h:\n").find("is not tcp://HOST:PORT"), std::string::npos);
  EXPECT_NE(ErrorOf("[node.n1]\nendpoint = tcp://:80\n").find("is not tcp://HOST:PORT"), std::string::npos);
  EXPECT_EQ(ErrorOf("[node.n1]\n"), "planb.ini: [node.n1]: endpoint: missing (e.g. endpoint = tcp://10.0.0.1:7601)");
  EXPECT_EQ(ErrorOf("[node.n1]\nendpoint = tcp://h:1\nport = 2\n"),
            "planb.ini: [node.n1]: port: unknown key (known: endpoint, public_key)");
  EXPECT_NE(ErrorOf("[node.a/b]\nendpoint = tcp://h:1\n").find("invalid node name 'a/b'"), std::string::npos);
  EXPECT_NE(ErrorOf("[node.n1]\nendpoint = tcp://h:1\nendpoint = tcp://h:2\n").find("endpoint: given twice"),
            std::string::npos);
}

TEST(ClusterConfig, RefusesMalformedSettings) {
  EXPECT_EQ(ErrorOf("request_timeout = 5\n"),
            "planb.ini: request_timeout: '5' is not a duration (e.g. 500ms, 5s, 1m, 2h)");
  EXPECT_NE(ErrorOf("request_timeout = 5ms\n").find("below the minimum of 10ms"), std::string::npos);
  EXPECT_NE(ErrorOf("request_timeout = -5s\n").find("is not a duration"), std::string::npos);
  EXPECT_NE(ErrorOf("send_part_retry_delay = 1 s\n").find("is not a duration"), std::string::npos);
  EXPECT_NE(ErrorOf("send_part_retry_delay = 99999999999999999999s\n").find("is not a duration"), std::string::npos);
  EXPECT_EQ(ErrorOf("send_part_attempts = 0\n"),
            "planb.ini: send_part_attempts: '0' is not an attempt count (1..100)");
  EXPECT_NE(ErrorOf("send_part_attempts = three\n").find("is not an attempt count"), std::string::npos);
  EXPECT_NE(ErrorOf("max_batch_size = lots\n").find("max_batch_size: 'lots' is not a size"), std::string::npos);
  EXPECT_NE(ErrorOf("node_name = a b\n").find("node_name: 'a b' is not a node name"), std::string::npos);
  EXPECT_EQ(ErrorOf("[map.a]\ntype = state\nsynchronise_merge = yes\n"),
            "planb.ini: [map.a]: synchronise_merge: 'yes' is not true or false");
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

TEST(ClusterConfig, SnapshotSettingsHaveTheDesignsDefaultsAndTakeUnits) {
  Config config;
  ASSERT_TRUE(Parse("", &config).ok());
  EXPECT_EQ(config.cluster.snapshot_retry_fetch_interval_ms, 60 * 1000);
  EXPECT_EQ(config.cluster.min_time_to_keep_snapshots_ms, 10 * 60 * 1000);
  EXPECT_EQ(config.cluster.min_time_to_keep_env_open_ms, 60 * 1000);
  ASSERT_TRUE(Parse("snapshot_retry_fetch_interval = 30s\nmin_time_to_keep_snapshots = PT1H\n"
                    "min_time_to_keep_env_open = 0s\n",
                    &config)
                  .ok());
  EXPECT_EQ(config.cluster.snapshot_retry_fetch_interval_ms, 30 * 1000);
  EXPECT_EQ(config.cluster.min_time_to_keep_snapshots_ms, 60 * 60 * 1000);
  EXPECT_EQ(config.cluster.min_time_to_keep_env_open_ms, 0);
}

TEST(ClusterConfig, SnapshotCompressionIsNoneUnlessDeflateIsAsked) {
  Config config;
  ASSERT_TRUE(Parse("", &config).ok());
  EXPECT_FALSE(config.cluster.snapshot_deflate);
  ASSERT_TRUE(Parse("snapshot_compression = deflate\n", &config).ok());
  EXPECT_TRUE(config.cluster.snapshot_deflate);
  ASSERT_TRUE(Parse("snapshot_compression = none\n", &config).ok());
  EXPECT_FALSE(config.cluster.snapshot_deflate);
}

TEST(ClusterConfig, RefusesMalformedSnapshotCompression) {
  for (const char* value : {"", "zstd", "Deflate", "none deflate", "1"}) {
    EXPECT_EQ(ErrorOf(std::string("snapshot_compression = ") + value + "\n"),
              std::string("planb.ini: snapshot_compression: '") + value + "' is not none or deflate");
  }
}

TEST(ClusterConfig, RefusesMalformedSnapshotSettings) {
  for (const char* key : {"snapshot_retry_fetch_interval", "min_time_to_keep_snapshots", "min_time_to_keep_env_open"}) {
    for (const char* value : {"soon", "-1m", "10", "5 parsecs", ""}) {
      const std::string message = ErrorOf(std::string(key) + " = " + value + "\n");
      EXPECT_NE(message.find(key), std::string::npos) << message;
      EXPECT_NE(message.find("not a duration"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace planb
