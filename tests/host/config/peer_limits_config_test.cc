// The config keys that bound what a peer may hold on a storage node (issue 11, defect 3): upload_idle_timeout
// and the remote read caps, their defaults and how each malformed value is refused.
#include <gtest/gtest.h>

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

TEST(PeerLimitsConfig, DefaultsAreDocumentedAndBounded) {
  Config config;
  ASSERT_TRUE(Parse("", &config).ok());
  EXPECT_EQ(config.cluster.upload_idle_timeout_ms, 30 * 1000);  // well under a minute
  EXPECT_EQ(config.cluster.max_remote_where_terms, 10000u);
  EXPECT_EQ(config.cluster.max_remote_rows_examined, 100000000u);
  EXPECT_EQ(config.cluster.max_remote_bytes_examined, uint64_t{4} << 30);
  EXPECT_EQ(config.cluster.min_transfer_rate, uint64_t{64} << 10);
  EXPECT_EQ(config.cluster.max_client_share_percent, 25u);
  EXPECT_EQ(config.cluster.remote_read_timeout_ms, 50 * 1000);
  EXPECT_EQ(config.cluster.max_unread_reply_bytes, uint64_t{128} << 20);
  EXPECT_EQ(config.cluster.max_connections, 1024u);
  EXPECT_EQ(config.cluster.idle_connection_timeout_ms, 5 * 60 * 1000);
}

TEST(PeerLimitsConfig, TakesUnitsAndCounts) {
  Config config;
  ASSERT_TRUE(Parse("upload_idle_timeout = 250ms\nremote_read_timeout = 2s\nmax_remote_where_terms = 5\n"
                    "max_remote_rows_examined = 1000\nmax_remote_bytes_examined = 64MiB\n",
                    &config)
                  .ok());
  EXPECT_EQ(config.cluster.upload_idle_timeout_ms, 250);
  EXPECT_EQ(config.cluster.remote_read_timeout_ms, 2000);
  EXPECT_EQ(config.cluster.max_remote_where_terms, 5u);
  EXPECT_EQ(config.cluster.max_remote_rows_examined, 1000u);
  EXPECT_EQ(config.cluster.max_remote_bytes_examined, uint64_t{64} << 20);
  ASSERT_TRUE(Parse("max_client_share = 50%\nmin_transfer_rate = 1MiB\n", &config).ok());
  EXPECT_EQ(config.cluster.max_client_share_percent, 50u);
  EXPECT_EQ(config.cluster.min_transfer_rate, uint64_t{1} << 20);
  ASSERT_TRUE(Parse("max_connections = 64\nidle_connection_timeout = 90s\n", &config).ok());
  EXPECT_EQ(config.cluster.max_connections, 64u);
  EXPECT_EQ(config.cluster.idle_connection_timeout_ms, 90 * 1000);
  ASSERT_TRUE(Parse("max_unread_reply_bytes = 16MiB\n", &config).ok());
  EXPECT_EQ(config.cluster.max_unread_reply_bytes, uint64_t{16} << 20);
  ASSERT_TRUE(Parse("max_client_share = 100\nmin_transfer_rate = 0\n", &config).ok());
  EXPECT_EQ(config.cluster.max_client_share_percent, 100u);
  EXPECT_EQ(config.cluster.min_transfer_rate, 0u);
}

TEST(PeerLimitsConfig, RefusesMalformedValues) {
  EXPECT_EQ(ErrorOf("upload_idle_timeout = 30\n"),
            "planb.ini: upload_idle_timeout: '30' is not a duration (e.g. 500ms, 5s, 1m, 2h)");
  EXPECT_NE(ErrorOf("upload_idle_timeout = 0s\n").find("below the minimum of 10ms"), std::string::npos);
  EXPECT_NE(ErrorOf("remote_read_timeout = -1s\n").find("is not a duration"), std::string::npos);
  EXPECT_EQ(ErrorOf("max_remote_where_terms = 0\n"), "planb.ini: max_remote_where_terms: '0' is not a count above 0");
  EXPECT_EQ(ErrorOf("max_remote_rows_examined = many\n"),
            "planb.ini: max_remote_rows_examined: 'many' is not a count above 0");
  EXPECT_EQ(ErrorOf("max_remote_rows_examined = -3\n"),
            "planb.ini: max_remote_rows_examined: '-3' is not a count above 0");
  for (const char* bad : {"0%", "101%", "-5%", "25 %", "half", "%"}) {
    EXPECT_EQ(ErrorOf(std::string("max_client_share = ") + bad + "\n"),
              std::string("planb.ini: max_client_share: '") + bad + "' is not a share: a whole percentage from 1% to 100%");
  }
  for (const char* bad : {"fast", "-1KiB", "1.5KiB"}) {
    EXPECT_EQ(ErrorOf(std::string("min_transfer_rate = ") + bad + "\n"),
              std::string("planb.ini: min_transfer_rate: '") + bad + "' is not a rate: bytes per second such as 64KiB, or 0 for none");
  }
  for (const char* bad : {"0", "-3", "many", "4294967296"}) {
    EXPECT_EQ(ErrorOf(std::string("max_connections = ") + bad + "\n"),
              std::string("planb.ini: max_connections: '") + bad + "' is not a count above 0");
  }
  EXPECT_NE(ErrorOf("idle_connection_timeout = 5\n").find("is not a duration"), std::string::npos);
  EXPECT_NE(ErrorOf("idle_connection_timeout = 0s\n").find("below the minimum of 10ms"), std::string::npos);
  for (const char* bad : {"0", "some", "-1MiB"}) {
    EXPECT_EQ(ErrorOf(std::string("max_unread_reply_bytes = ") + bad + "\n"),
              std::string("planb.ini: max_unread_reply_bytes: '") + bad + "' is not a size above 0 (e.g. 128MiB)");
  }
  for (const char* bad : {"0", "lots", "-1MiB", "1.5GiB"}) {
    EXPECT_EQ(ErrorOf(std::string("max_remote_bytes_examined = ") + bad + "\n"),
              std::string("planb.ini: max_remote_bytes_examined: '") + bad +
                  "' is not a size above 0 (e.g. 4GiB, 512MiB)");
  }
}

}  // namespace
}  // namespace planb
