#include "host/config/config.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace planb {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

Status Parse(std::string_view text, Config* config) { return ParseConfig("planb.ini", text, "/etc/planb", config); }

// The message of parsing `text`, which must fail with kInvalidArgument.
std::string ErrorOf(std::string_view text) {
  Config config;
  const Status status = Parse(text, &config);
  EXPECT_FALSE(status.ok()) << text;
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status.message();
  return status.message();
}

uint64_t SizeOf(std::string_view text) {
  uint64_t bytes = 7;
  EXPECT_TRUE(ParseByteSize(text, &bytes)) << text;
  return bytes;
}

// --- ParseByteSize ---

TEST(ParseByteSize, ReadsBinaryUnits) {
  EXPECT_EQ(SizeOf("10GiB"), 10 * kGiB);
  EXPECT_EQ(SizeOf("512MiB"), 512 * kMiB);
  EXPECT_EQ(SizeOf("64KiB"), 64 * 1024u);
  EXPECT_EQ(SizeOf("1TiB"), uint64_t{1} << 40);
}

TEST(ParseByteSize, ReadsDecimalUnits) {
  EXPECT_EQ(SizeOf("10GB"), 10'000'000'000u);
  EXPECT_EQ(SizeOf("10MB"), 10'000'000u);
  EXPECT_EQ(SizeOf("10KB"), 10'000u);
  EXPECT_EQ(SizeOf("2TB"), 2'000'000'000'000u);
}

TEST(ParseByteSize, ReadsBareDigitsAsBytes) {
  EXPECT_EQ(SizeOf("1048576"), kMiB);
  EXPECT_EQ(SizeOf("0"), 0u);
  EXPECT_EQ(SizeOf("007"), 7u);
}

TEST(ParseByteSize, IgnoresUnitCase) {
  EXPECT_EQ(SizeOf("10gib"), 10 * kGiB);
  EXPECT_EQ(SizeOf("10GIB"), 10 * kGiB);
  EXPECT_EQ(SizeOf("3mb"), 3'000'000u);
}

TEST(ParseByteSize, AcceptsOneSpaceBeforeTheUnit) {
  EXPECT_EQ(SizeOf("10 GiB"), 10 * kGiB);
  uint64_t bytes = 0;
  EXPECT_FALSE(ParseByteSize("10  GiB", &bytes));
  EXPECT_FALSE(ParseByteSize("10 ", &bytes));
  EXPECT_FALSE(ParseByteSize("10\tGiB", &bytes));
}

TEST(ParseByteSize, RefusesJunk) {
  for (std::string_view text : {"", " ", "GiB", "-1", "-1GiB", "+1", "1.5GiB", "0.5", "10XB", "10GiBs", " 10",
                                "10GiB ", "0x10", "1e9", "10B", "ten", "10 GiB extra"}) {
    uint64_t bytes = 42;
    EXPECT_FALSE(ParseByteSize(text, &bytes)) << "'" << text << "'";
    EXPECT_EQ(bytes, 42u) << "output changed for '" << text << "'";
  }
}

TEST(ParseByteSize, RefusesOverflow) {
  EXPECT_EQ(SizeOf("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(SizeOf("16777215TiB"), uint64_t{16777215} << 40);  // 2^64 - 2^40
  uint64_t bytes = 0;
  EXPECT_FALSE(ParseByteSize("18446744073709551616", &bytes));
  EXPECT_FALSE(ParseByteSize("99999999999999999999999", &bytes));
  EXPECT_FALSE(ParseByteSize("16777216TiB", &bytes));  // exactly 2^64
  EXPECT_FALSE(ParseByteSize("18446744073709552KB", &bytes));
}

// --- Map names ---

TEST(IsValidMapName, AcceptsLowerCaseDigitsAndUnderscores) {
  EXPECT_TRUE(IsValidMapName("city_to_country"));
  EXPECT_TRUE(IsValidMapName("a"));
  EXPECT_TRUE(IsValidMapName("a1_"));
  EXPECT_TRUE(IsValidMapName(std::string(128, 'x')));
}

TEST(IsValidMapName, RefusesEverythingElse) {
  for (std::string_view name : {"", "City", "CITY", "1city", "_city", "city-country", "city.x", "city x",
                                "cit\xc3\xa9", "city/x"}) {
    EXPECT_FALSE(IsValidMapName(name)) << name;
  }
  EXPECT_FALSE(IsValidMapName(std::string(129, 'x')));
}

TEST(NormaliseMapName, LowerCasesAscii) {
  EXPECT_EQ(NormaliseMapName("CITY_To_country9"), "city_to_country9");
  EXPECT_EQ(NormaliseMapName("caf\xc3\x89"), "caf\xc3\x89");
}

// --- ParseConfig: what it reads ---

TEST(ParseConfig, ReadsEveryKey) {
  Config config;
  ASSERT_TRUE(Parse(R"(# planb
home = /var/lib/planb
plugin_dir = /opt/planb/plugins
plugin_dir = /usr/local/lib/planb   # a second one

[map.city_to_country]
type = state
scheme = hashed
max_store_size = 20GiB
max_readers = 500
hash_bits = 64
zeta = last
alpha = x = y
)",
                    &config)
                  .ok());
  EXPECT_EQ(config.path, "planb.ini");
  EXPECT_EQ(config.home, "/var/lib/planb");
  EXPECT_EQ(config.plugin_dirs, (std::vector<std::string>{"/opt/planb/plugins", "/usr/local/lib/planb"}));
  ASSERT_EQ(config.maps.size(), 1u);
  const MapConfig& map = config.maps.at("city_to_country");
  EXPECT_EQ(map.name, "city_to_country");
  EXPECT_EQ(map.type, "state");
  EXPECT_EQ(map.scheme, "hashed");
  EXPECT_EQ(map.max_store_size, 20 * kGiB);
  EXPECT_EQ(map.max_readers, 500u);
  using Option = std::pair<std::string, std::string>;
  EXPECT_EQ(map.plugin_options,
            (std::vector<Option>{{"hash_bits", "64"}, {"zeta", "last"}, {"alpha", "x = y"}}));  // file order
}

TEST(ParseConfig, UsesDefaultsForOmittedKeys) {
  Config config;
  ASSERT_TRUE(Parse("[map.a]\ntype = state\n", &config).ok());
  EXPECT_EQ(config.home, "");
  EXPECT_TRUE(config.plugin_dirs.empty());
  const MapConfig& map = config.maps.at("a");
  EXPECT_EQ(map.scheme, "");
  EXPECT_EQ(map.max_store_size, kDefaultMaxStoreSize);
  EXPECT_EQ(map.max_readers, kDefaultMaxReaders);
  EXPECT_TRUE(map.plugin_options.empty());
}

TEST(ParseConfig, AcceptsAnEmptyFile) {
  Config config;
  ASSERT_TRUE(Parse("", &config).ok());
  EXPECT_TRUE(config.maps.empty());
  ASSERT_TRUE(Parse("# only a comment\n\n   \n", &config).ok());
  EXPECT_TRUE(config.maps.empty());
}

TEST(ParseConfig, ReadsSeveralMaps) {
  Config config;
  ASSERT_TRUE(Parse("[map.b]\ntype = ranged\n[map.a]\ntype = state\nmax_readers = 1\n", &config).ok());
  ASSERT_EQ(config.maps.size(), 2u);
  EXPECT_EQ(config.maps.at("b").type, "ranged");
  EXPECT_EQ(config.maps.at("a").max_readers, 1u);
}

TEST(ParseConfig, ResolvesRelativePathsAgainstBaseDir) {
  Config config;
  ASSERT_TRUE(Parse("home = data\nplugin_dir = plugins\nplugin_dir = /abs/plugins\n", &config).ok());
  EXPECT_EQ(config.home, "/etc/planb/data");
  EXPECT_EQ(config.plugin_dirs, (std::vector<std::string>{"/etc/planb/plugins", "/abs/plugins"}));
}

TEST(ParseConfig, KeepsRelativePathsWithEmptyBaseDir) {
  Config config;
  ASSERT_TRUE(ParseConfig("planb.ini", "home = data\n", "", &config).ok());
  EXPECT_EQ(config.home, "data");
}

TEST(ParseConfig, TrimsAndIgnoresCommentsAndCarriageReturns) {
  Config config;
  ASSERT_TRUE(Parse("  home =  /h  # where\r\n[map.a]   \r\n\ttype\t=\tstate\r\n", &config).ok());
  EXPECT_EQ(config.home, "/h");
  EXPECT_EQ(config.maps.at("a").type, "state");
}

TEST(ParseConfig, KeepsDottedKeysInsideAMapSection) {
  Config config;
  ASSERT_TRUE(Parse("[map.a]\ntype = state\nhash.bits = 64\n", &config).ok());
  using Option = std::pair<std::string, std::string>;
  EXPECT_EQ(config.maps.at("a").plugin_options, (std::vector<Option>{{"hash.bits", "64"}}));
}

TEST(ParseConfig, LeavesConfigUntouchedOnError) {
  Config config;
  config.home = "/before";
  EXPECT_FALSE(Parse("home = /after\n[map.a]\n", &config).ok());
  EXPECT_EQ(config.home, "/before");
  EXPECT_TRUE(config.maps.empty());
}

// --- ParseConfig: what it refuses ---

TEST(ParseConfig, RefusesUnknownTopLevelKeyListingKnownOnes) {
  const std::string message = ErrorOf("home = /h\nnode_nmae = a\n");
  EXPECT_EQ(
      message,
      "planb.ini: node_nmae: unknown top-level key (known: home, plugin_dir, file_mode, maintain_interval, "
      "delete_orphans_after, merge_threads, secret_key_file, metrics_bind, ready_min_free_disk, log_level, log_format, "
      "log_file, allow_plaintext, "
      "node_name, node_list, "
      "request_timeout, send_part_attempts, send_part_retry_delay, max_batch_size, "
      "snapshot_retry_fetch_interval, min_time_to_keep_snapshots, min_time_to_keep_env_open, snapshot_compression, "
      "upload_idle_timeout, max_remote_where_terms, max_remote_rows_examined, max_remote_bytes_examined, "
      "remote_read_timeout, max_client_share, min_transfer_rate, max_unread_reply_bytes, max_connections, "
      "idle_connection_timeout, batch_retention, batch_retention_bytes, catch_up_interval, write_quorum)");
}

TEST(ParseConfig, ReadsMergeThreads) {
  Config config;
  ASSERT_TRUE(Parse("", &config).ok());
  EXPECT_EQ(config.merge_threads, 2);
  ASSERT_TRUE(Parse("merge_threads = 16\n", &config).ok());
  EXPECT_EQ(config.merge_threads, 16);
  ASSERT_TRUE(Parse("merge_threads = 1\n", &config).ok());
  EXPECT_EQ(config.merge_threads, 1);
  for (const char* bad : {"0", "17", "-1", "two", "2.5", ""}) {
    EXPECT_EQ(ErrorOf(std::string("merge_threads = ") + bad + "\n"),
              std::string("planb.ini: merge_threads: '") + bad + "' is not a count from 1 to 16");
  }
}

TEST(ParseConfig, ReadsMaintenanceKeys) {
  Config config;
  ASSERT_TRUE(Parse("maintain_interval = 15m\ndelete_orphans_after = 0s\n[map.a]\ntype = temporal\ncondense = true\n"
                    "condense_after = 7d\nretain_for = P30D\nreclaim_free_share = 0.25\n[map.b]\ntype = temporal\n"
                    "retain_for =\n",
                    &config)
                  .ok());
  EXPECT_EQ(config.maintain_interval_ms, 15 * 60 * 1000);
  EXPECT_EQ(config.delete_orphans_after_ms, 0);
  const MapConfig& a = config.maps.at("a");
  EXPECT_TRUE(a.condense);
  EXPECT_EQ(a.condense_after_ms, int64_t{7} * 24 * 3600 * 1000);
  EXPECT_TRUE(a.retain);
  EXPECT_EQ(a.retain_for_ms, int64_t{30} * 24 * 3600 * 1000);
  EXPECT_DOUBLE_EQ(a.reclaim_free_share, 0.25);
  const MapConfig& b = config.maps.at("b");  // defaults; an empty retain_for keeps forever
  EXPECT_FALSE(b.condense);
  EXPECT_EQ(b.condense_after_ms, 0);
  EXPECT_FALSE(b.retain);
  EXPECT_DOUBLE_EQ(b.reclaim_free_share, 0.5);
  Config defaults;
  ASSERT_TRUE(Parse("", &defaults).ok());
  EXPECT_EQ(defaults.maintain_interval_ms, 60 * 60 * 1000);
  EXPECT_EQ(defaults.delete_orphans_after_ms, 24 * 60 * 60 * 1000);
}

TEST(ParseConfig, RefusesMalformedMaintenanceKeysNamingMapAndKey) {
  const std::string map = "[map.a]\ntype = temporal\n";
  EXPECT_EQ(ErrorOf(map + "retain_for = -1d\n"),
            "planb.ini: [map.a]: retain_for: '-1d' is not a duration (e.g. 30s, 1h, 7d or P7D; not negative)");
  EXPECT_EQ(ErrorOf(map + "retain_for = 0s\n"), "planb.ini: [map.a]: retain_for: '0s' is below the minimum of 1ms");
  EXPECT_EQ(ErrorOf(map + "condense_after = soon\n"),
            "planb.ini: [map.a]: condense_after: 'soon' is not a duration (e.g. 30s, 1h, 7d or P7D; not negative)");
  EXPECT_EQ(ErrorOf(map + "condense = yes\n"), "planb.ini: [map.a]: condense: 'yes' is not true or false");
  for (const char* share : {"1.5", "-0.1", "half", "0.5x", "nan", ""}) {
    EXPECT_EQ(ErrorOf(map + "reclaim_free_share = " + share + "\n"),
              std::string("planb.ini: [map.a]: reclaim_free_share: '") + share +
                  "' is not a share between 0 and 1 (e.g. 0.5)")
        << share;
  }
  EXPECT_EQ(ErrorOf("maintain_interval = 10ms\n"),
            "planb.ini: maintain_interval: '10ms' is below the minimum of 1000ms");
  EXPECT_EQ(ErrorOf("delete_orphans_after = -5m\n"),
            "planb.ini: delete_orphans_after: '-5m' is not a duration (e.g. 30s, 1h, 7d or P7D; not negative)");
}

TEST(ParseConfig, RefusesSectionStyleKeyAtTopLevel) {
  // Boost would read this as [map.a] type = state; it is a top-level key all the same.
  EXPECT_TRUE(Contains(ErrorOf("map.a.type = state\n"), "map.a.type: unknown top-level key"));
}

TEST(ParseConfig, RefusesUnknownSectionKind) {
  EXPECT_EQ(ErrorOf("[foo.bar]\nx = 1\n"), "planb.ini: [foo.bar]: unknown section kind 'foo' (known: [map.NAME], [node.NAME], [client.NAME])");
  EXPECT_TRUE(Contains(ErrorOf("[mapx]\ntype = state\n"), "[mapx]: unknown section kind 'mapx'"));
  EXPECT_TRUE(Contains(ErrorOf("[nodes]\n"), "[nodes]: unknown section kind 'nodes'"));  // even with no keys
}

TEST(ParseConfig, RefusesSectionWithoutName) {
  EXPECT_EQ(ErrorOf("[map.]\ntype = state\n"), "planb.ini: [map.]: section needs a name, as in [map.NAME]");
  EXPECT_TRUE(Contains(ErrorOf("[map]\ntype = state\n"), "[map]: section needs a name"));
  EXPECT_TRUE(Contains(ErrorOf("[]\ntype = state\n"), "planb.ini: line 1: '[]' is a section with no name"));
  EXPECT_TRUE(Contains(ErrorOf("[  ]\n"), "is a section with no name"));
}

TEST(ParseConfig, RefusesInvalidMapNames) {
  EXPECT_EQ(ErrorOf("[map.City]\ntype = state\n"),
            "planb.ini: [map.City]: invalid map name 'City' (lower case letters, digits and _, starting with a "
            "letter; at most 128 characters)");
  EXPECT_TRUE(Contains(ErrorOf("[map.1city]\ntype = state\n"), "invalid map name '1city'"));
  EXPECT_TRUE(Contains(ErrorOf("[map.city-country]\ntype = state\n"), "invalid map name 'city-country'"));
  EXPECT_TRUE(Contains(ErrorOf("[map.a.b]\ntype = state\n"), "[map.a.b]: invalid map name 'a.b'"));
  const std::string long_name(129, 'a');
  EXPECT_TRUE(Contains(ErrorOf("[map." + long_name + "]\ntype = state\n"), "invalid map name '" + long_name + "'"));
}

TEST(ParseConfig, RefusesNamesDifferingOnlyInCase) {
  // Names must be lower case, so [map.City] never reaches the point of clashing with [map.city].
  EXPECT_TRUE(Contains(ErrorOf("[map.city]\ntype = state\n[map.City]\ntype = state\n"), "invalid map name 'City'"));
}

TEST(ParseConfig, RefusesMissingType) {
  EXPECT_EQ(ErrorOf("[map.city]\nscheme = hashed\n"),
            "planb.ini: [map.city]: type: missing (the store-type plugin name, e.g. type = state)");
  EXPECT_TRUE(Contains(ErrorOf("[map.city]\n"), "[map.city]: type: missing"));  // a section with no keys
}

TEST(ParseConfig, RefusesEmptyValues) {
  EXPECT_EQ(ErrorOf("[map.city]\ntype =\n"), "planb.ini: [map.city]: type: empty value");
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\nscheme = \n"), "planb.ini: [map.city]: scheme: empty value");
  EXPECT_EQ(ErrorOf("home =\n"), "planb.ini: home: empty value");
  EXPECT_EQ(ErrorOf("plugin_dir = # none\n"), "planb.ini: plugin_dir: empty value");
}

TEST(ParseConfig, RefusesKeyGivenTwiceInASection) {
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\ntype = ranged\n"), "planb.ini: [map.city]: type: given twice");
  EXPECT_TRUE(Contains(ErrorOf("[map.city]\ntype = state\nhash_bits = 64\nhash_bits = 32\n"),
                       "[map.city]: hash_bits: given twice"));
}

TEST(ParseConfig, RefusesHomeTwiceButNotPluginDir) {
  EXPECT_EQ(ErrorOf("home = /a\nhome = /b\n"), "planb.ini: home: given twice");
  Config config;
  EXPECT_TRUE(Parse("plugin_dir = /a\nplugin_dir = /a\n", &config).ok());
  EXPECT_EQ(config.plugin_dirs.size(), 2u);
}

TEST(ParseConfig, RefusesSectionGivenTwice) {
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\n[map.city]\nscheme = hashed\n"),
            "planb.ini: [map.city]: section given twice");
}

TEST(ParseConfig, RefusesBadMaxStoreSize) {
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\nmax_store_size = 10XB\n"),
            "planb.ini: [map.city]: max_store_size: '10XB' is not a size (e.g. 10GiB, 512MiB, 1048576)");
  for (const char* size : {"-1GiB", "1.5GiB", "", "99999999999TiB"}) {
    EXPECT_TRUE(Contains(ErrorOf(std::string("[map.city]\ntype = state\nmax_store_size = ") + size + "\n"),
                         "is not a size"))
        << size;
  }
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\nmax_store_size = 0\n"),
            "planb.ini: [map.city]: max_store_size: '0' is below the minimum of 1MiB");
  EXPECT_TRUE(Contains(ErrorOf("[map.city]\ntype = state\nmax_store_size = 1048575\n"), "below the minimum"));
  EXPECT_TRUE(Contains(ErrorOf("[map.city]\ntype = state\nmax_store_size = 1MB\n"), "below the minimum"));
}

TEST(ParseConfig, AcceptsMaxStoreSizeFromOneMiB) {
  Config config;
  ASSERT_TRUE(Parse("[map.city]\ntype = state\nmax_store_size = 1MiB\n", &config).ok());
  EXPECT_EQ(config.maps.at("city").max_store_size, kMiB);
}

TEST(ParseConfig, RefusesBadMaxReaders) {
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\nmax_readers = 0\n"),
            "planb.ini: [map.city]: max_readers: '0' is not a reader count (1..32767)");
  for (const char* readers : {"-1", "abc", "12x", "1.5", "", "32768", "4294967297", "+5", "0x10"}) {
    EXPECT_TRUE(Contains(ErrorOf(std::string("[map.city]\ntype = state\nmax_readers = ") + readers + "\n"),
                         "is not a reader count"))
        << readers;
  }
}

TEST(ParseConfig, AcceptsMaxReadersAtTheLimits) {
  Config config;
  ASSERT_TRUE(Parse("[map.a]\ntype = state\nmax_readers = 1\n[map.b]\ntype = state\nmax_readers = 32767\n", &config)
                  .ok());
  EXPECT_EQ(config.maps.at("a").max_readers, 1u);
  EXPECT_EQ(config.maps.at("b").max_readers, 32767u);
}

TEST(ParseConfig, RefusesLineWithoutEquals) {
  const std::string message = ErrorOf("home = /h\njust words\n");
  EXPECT_TRUE(Contains(message, "planb.ini: ")) << message;
  EXPECT_TRUE(Contains(message, "just words")) << message;
}

TEST(ParseConfig, RefusesEmptyKey) {
  EXPECT_EQ(ErrorOf("[map.city]\ntype = state\n= 5\n"), "planb.ini: line 3: '= 5' has no key before the '='");
  EXPECT_TRUE(Contains(ErrorOf("= 5\n"), "planb.ini: line 1: '= 5' has no key"));
}

// --- FindMap ---

TEST(FindMap, MatchesAnyCase) {
  Config config;
  ASSERT_TRUE(Parse("[map.city_to_country]\ntype = state\n", &config).ok());
  const MapConfig* map = config.FindMap("CITY_TO_COUNTRY");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->name, "city_to_country");
  EXPECT_EQ(config.FindMap("city_to_country"), map);
  EXPECT_EQ(config.FindMap("city"), nullptr);
  EXPECT_EQ(config.FindMap(""), nullptr);
}

// --- LoadConfig ---

class LoadConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "planb_config_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(LoadConfigTest, ReadsFileAndResolvesAgainstItsDirectory) {
  const std::string path = Write("planb.ini", "home = data\nplugin_dir = plugins\n[map.a]\ntype = state\n");
  Config config;
  const Status status = LoadConfig(path, &config);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(config.path, path);
  EXPECT_EQ(config.home, (dir_ / "data").string());
  EXPECT_EQ(config.plugin_dirs, (std::vector<std::string>{(dir_ / "plugins").string()}));
  EXPECT_EQ(config.maps.at("a").type, "state");
}

TEST_F(LoadConfigTest, NamesThePathInErrors) {
  const std::string path = Write("bad.ini", "[map.a]\ntype = state\nmax_readers = many\n");
  Config config;
  const Status status = LoadConfig(path, &config);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), path + ": [map.a]: max_readers: 'many' is not a reader count (1..32767)");
}

TEST_F(LoadConfigTest, RefusesMissingFile) {
  const std::string path = (dir_ / "absent.ini").string();
  Config config;
  const Status status = LoadConfig(path, &config);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_TRUE(Contains(status.message(), path + ": cannot open")) << status.message();
}

TEST_F(LoadConfigTest, RefusesUnreadableFile) {
  // A directory opens but cannot be read; unlike a chmod 000 file, that holds when the tests run as root.
  const std::string path = (dir_ / "sub.ini").string();
  ASSERT_TRUE(std::filesystem::create_directory(path));
  Config config;
  const Status status = LoadConfig(path, &config);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_TRUE(Contains(status.message(), path + ": cannot")) << status.message();
}

TEST_F(LoadConfigTest, ReadsAFileWithoutTrailingNewline) {
  const std::string path = Write("planb.ini", "home = /h");
  Config config;
  ASSERT_TRUE(LoadConfig(path, &config).ok());
  EXPECT_EQ(config.home, "/h");
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

TEST(ParseConfig, FileModeIsOctalWithOwnerReadAndWrite) {
  Config config;
  ASSERT_TRUE(ParseConfig("planb.ini", "", "/etc/planb", &config).ok());
  EXPECT_EQ(config.file_mode, 0640u);
  ASSERT_TRUE(ParseConfig("planb.ini", "file_mode = 0600\n", "/etc/planb", &config).ok());
  EXPECT_EQ(config.file_mode, 0600u);
  ASSERT_TRUE(ParseConfig("planb.ini", "file_mode = 644\n", "/etc/planb", &config).ok());
  EXPECT_EQ(config.file_mode, 0644u);
  for (const char* bad : {"0666", "0660", "0602", "0777", "0620", "0644x", "0800", "rw-r-----", "01777", "4755", "0440", "0200", "06", "", "-0640", "0x1a4"}) {
    const Status s = ParseConfig("planb.ini", std::string("file_mode = ") + bad + "\n", "/etc/planb", &config);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("file_mode"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("not a file mode"), std::string::npos) << bad << ": " << s.message();
  }
}

}  // namespace
}  // namespace planb
