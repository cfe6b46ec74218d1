// `planb bench` through the real binary on real files: every output format parsed, the chart parsed as XML, the
// reasons and recommendations, every bad input, and SIGINT. Speed is never asserted; sizes are.
#include <expat.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/cli/cli_test_env.h"
#include "support/node_process.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

constexpr char kSchemes[][16] = {"direct", "hashed", "hybrid", "lookup_table", "variable"};
constexpr size_t kRowsPerMap = 10;  // five schemes, value_dedup off and on

constexpr char kBenchConfig[] =
    "[map.cities]\n"
    "type = state\n"
    "scheme = hashed\n"
    "[map.statuses]\n"
    "type = state\n"
    "scheme = direct\n"
    "[map.visits]\n"
    "type = temporal\n"
    "[map.ranges]\n"
    "type = ranged\n";

const std::vector<std::string> kFields = {"map",
                                          "type",
                                          "scheme",
                                          "value_dedup",
                                          "configured",
                                          "records",
                                          "rows",
                                          "load_rows_per_s",
                                          "merge_rows_per_s",
                                          "hit_p50_ns",
                                          "hit_p99_ns",
                                          "miss_p50_ns",
                                          "miss_p99_ns",
                                          "hit_lookups",
                                          "miss_lookups",
                                          "bytes_per_row",
                                          "data_bytes",
                                          "key_table_bytes",
                                          "value_table_bytes",
                                          "recommended",
                                          "recommendation",
                                          "unusable"};

// cities: 300 short distinct keys; statuses: 400 keys over 3 distinct 300-byte values (value_dedup's case);
// visits: temporal rows at two times.
std::string SampleXml() {
  std::string body;
  for (int i = 0; i < 300; ++i)
    body += Ref("cities", "city-" + std::to_string(i), "country " + std::to_string(i % 7)) + "\n";
  const std::string values[] = {std::string(300, 'a'), std::string(300, 'b'), std::string(300, 'c')};
  for (int i = 0; i < 400; ++i) body += Ref("statuses", "job/" + std::to_string(i), values[i % 3]) + "\n";
  for (int i = 0; i < 50; ++i) {
    for (const char* time : {"2024-01-01T00:00:00Z", "2024-06-01T00:00:00Z"}) {
      body += "  <reference><map>visits</map><time>" + std::string(time) + "</time><key>user" + std::to_string(i) +
              "</key><value>page " + time + "</value></reference>\n";
    }
  }
  body += "  <reference><map>ranges</map><range><from>1</from><to>5</to></range><value>x</value></reference>";
  return ReferenceData(body);
}

// RFC 4180 records: quoted fields may hold commas, quotes ("") and line breaks.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  EXPECT_TRUE(row.empty() && field.empty()) << "no line end after the last record";
  return rows;
}

class CliBench : public ::testing::Test {
 protected:
  CliBench() : env_(kBenchConfig), scratch_(env_.dir() + "/scratch") {
    fs::create_directories(scratch_);
    data_ = env_.Write("sample.xml", SampleXml());
  }
  // planb bench with `extra`, and --lookups, --runs 1 and --scratch unless `extra` gives them.
  ProcessResult Bench(std::vector<std::string> extra, const std::string& lookups = "300") const {
    std::vector<std::string> args{"bench", "--lookups", lookups};
    auto given = [&extra](const char* option) { return std::find(extra.begin(), extra.end(), option) != extra.end(); };
    if (!given("--runs")) args.insert(args.end(), {"--runs", "1"});
    if (!given("--scratch")) args.insert(args.end(), {"--scratch", scratch_});
    args.insert(args.end(), extra.begin(), extra.end());
    return env_.Run(args);
  }
  // Exit 2, an error on stderr holding `needle`, nothing on stdout and no scratch left.
  void ExpectBadInput(const std::vector<std::string>& extra, const std::string& needle) const {
    const ProcessResult r = Bench(extra);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(needle));
    EXPECT_THAT(r.out, IsEmpty());
    EXPECT_THAT(VisibleEntries(scratch_), IsEmpty());
  }
  nlohmann::ordered_json Json(const std::vector<std::string>& extra) const {
    std::vector<std::string> args{"--data", data_, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, IsEmpty());
    return nlohmann::ordered_json::parse(r.out);
  }

  CliEnv env_;
  std::string scratch_;
  std::string data_;
};

const nlohmann::ordered_json& RowOf(const nlohmann::ordered_json& rows, const std::string& map,
                                    const std::string& scheme, bool dedup) {
  for (const nlohmann::ordered_json& row : rows) {
    if (row["map"] == map && row["scheme"] == scheme && row["value_dedup"] == dedup) return row;
  }
  ADD_FAILURE() << "no row for " << map << " " << scheme << " " << dedup;
  static const nlohmann::ordered_json kNone;
  return kNone;
}

TEST_F(CliBench, CsvHasAHeaderAndOneRowPerMapSchemeAndDedup) {
  const ProcessResult r = Bench({"--data", data_, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());  // not a terminal: no progress
  const auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1 + 3 * kRowsPerMap);  // ranges takes no scheme: not benched
  EXPECT_EQ(rows[0], kFields);
  std::set<std::string> seen;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), kFields.size());
    const std::string& map = rows[i][0];
    seen.insert(map + "/" + rows[i][2] + "/" + rows[i][3]);
    EXPECT_NE(map, "ranges");
    EXPECT_EQ(rows[i][21], "") << "unusable";
    EXPECT_EQ(std::stoull(rows[i][5]), map == "cities" ? 300u : map == "statuses" ? 400u : 100u);
    for (size_t field : {7, 8, 9, 10, 11, 12}) EXPECT_GT(std::stod(rows[i][field]), 0) << kFields[field];
    // Distinct keys sampled, at most --lookups.
    EXPECT_EQ(std::stoull(rows[i][13]), map == "visits" ? 50u : std::min<uint64_t>(300, std::stoull(rows[i][5])));
    EXPECT_GT(std::stoull(rows[i][14]), 0u);
    EXPECT_GT(std::stod(rows[i][15]), 0);
  }
  EXPECT_EQ(seen.size(), 3 * kRowsPerMap);
  EXPECT_THAT(r.out, HasSubstr("cities,state,hashed,false,true,"));  // the configured scheme is marked
}

TEST_F(CliBench, JsonHasNumbersAsNumbersAndNullWhereAFigureIsAbsent) {
  const nlohmann::ordered_json rows = Json({"--maps", "cities,statuses"});
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 2 * kRowsPerMap);
  for (const nlohmann::ordered_json& row : rows) {
    ASSERT_TRUE(row.is_object());
    std::vector<std::string> keys;
    for (const auto& item : row.items()) keys.push_back(item.key());
    EXPECT_EQ(keys, kFields);
    for (const char* number : {"records", "rows", "hit_p50_ns", "hit_p99_ns", "miss_p50_ns", "hit_lookups",
                               "data_bytes", "load_rows_per_s", "merge_rows_per_s"}) {
      EXPECT_TRUE(row[number].is_number_unsigned()) << number << ": " << row[number];
    }
    EXPECT_TRUE(row["bytes_per_row"].is_number());
    EXPECT_TRUE(row["value_dedup"].is_boolean());
    EXPECT_TRUE(row["recommended"].is_boolean());
    EXPECT_TRUE(row["unusable"].is_null());
    // Value tables exist only with value_dedup; hashed and direct keep no key table.
    EXPECT_EQ(row["value_table_bytes"].is_null(), !row["value_dedup"].get<bool>()) << row;
    if (row["scheme"] == "hashed" || row["scheme"] == "direct") {
      EXPECT_TRUE(row["key_table_bytes"].is_null());
    }
    if (row["scheme"] == "lookup_table") {
      EXPECT_GT(row["key_table_bytes"].get<uint64_t>(), 0u);
    }
  }
}

// The rule (docs/schemes.md): the fastest hit p50 wins unless another scheme is at least 20% smaller on disk with
// a hit p50 within 1.25x of the fastest; of several such, the smallest. Checked against the figures printed.
TEST_F(CliBench, RecommendationsFollowTheRuleOnTheFiguresPrinted) {
  const nlohmann::ordered_json rows = Json({});
  for (const char* map : {"cities", "statuses", "visits"}) {
    const nlohmann::ordered_json* fastest = nullptr;
    std::vector<const nlohmann::ordered_json*> recommended;
    auto p50 = [](const nlohmann::ordered_json* row) { return (*row)["hit_p50_ns"].get<double>(); };
    auto bytes = [](const nlohmann::ordered_json* row) { return (*row)["bytes_per_row"].get<double>(); };
    double min_p50 = -1;
    for (const nlohmann::ordered_json& row : rows) {
      if (row["map"] != map) continue;
      if (row["recommended"].get<bool>()) recommended.push_back(&row);
      if (min_p50 < 0 || p50(&row) < min_p50) min_p50 = p50(&row);
    }
    // Within 10% of the fastest p50 counts as equally fast; of those, the smallest, then (rows of the same size:
    // page counts can tie) the one without value_dedup, then the configured scheme, then the faster.
    const auto better = [&](const nlohmann::ordered_json* a, const nlohmann::ordered_json* b) {
      if (bytes(a) != bytes(b)) return bytes(a) < bytes(b);
      if ((*a)["value_dedup"] != (*b)["value_dedup"]) return !(*a)["value_dedup"].get<bool>();
      if ((*a)["configured"] != (*b)["configured"]) return (*a)["configured"].get<bool>();
      return p50(a) < p50(b);
    };
    for (const nlohmann::ordered_json& row : rows) {
      if (row["map"] != map || p50(&row) > 1.10 * min_p50) continue;
      if (fastest == nullptr || better(&row, fastest)) fastest = &row;
    }
    ASSERT_EQ(recommended.size(), 1u) << map;
    const nlohmann::ordered_json* best = nullptr;
    for (const nlohmann::ordered_json& row : rows) {
      if (row["map"] != map || &row == fastest) continue;
      if (bytes(&row) > 0.8 * bytes(fastest) + 0.05 || p50(&row) > 1.25 * p50(fastest)) continue;
      if (best == nullptr || bytes(&row) < bytes(best) || (bytes(&row) == bytes(best) && p50(&row) < p50(best))) {
        best = &row;
      }
    }
    if (best == nullptr) best = fastest;
    // Rows of equal size may be told apart by value_dedup or the configured scheme: compare the figures, not
    // the names, and the speed only against the rule's bounds.
    EXPECT_EQ((*recommended[0])["bytes_per_row"], (*best)["bytes_per_row"]) << map;
    EXPECT_LE(p50(recommended[0]), (best == fastest ? 1.10 : 1.10 * 1.25) * min_p50) << map;
    const std::string label = (*recommended[0])["scheme"].get<std::string>() +
                              ((*recommended[0])["value_dedup"].get<bool>() ? "+value_dedup" : "");
    EXPECT_EQ((*recommended[0])["recommendation"].get<std::string>().rfind(label + ": ", 0), 0u)
        << (*recommended[0])["recommendation"];
  }
}

// Few distinct long values: every scheme's value_dedup row is far smaller than the same scheme without it.
TEST_F(CliBench, ValueDedupIsSmallerOnFewLongValues) {
  const nlohmann::ordered_json rows = Json({"--maps", "statuses"});
  for (const char* scheme : kSchemes) {
    const double plain = RowOf(rows, "statuses", scheme, false)["bytes_per_row"].get<double>();
    const double dedup = RowOf(rows, "statuses", scheme, true)["bytes_per_row"].get<double>();
    EXPECT_LT(dedup, 0.8 * plain) << scheme;
  }
}

TEST_F(CliBench, DirectSaysWhyWhenAKeyIsTooLong) {
  const std::string file = env_.Write(
      "long.xml", ReferenceData(Ref("cities", std::string(600, 'k'), "far") + "\n" + Ref("cities", "short", "near")));
  const ProcessResult r = Bench({"--data", file, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::ordered_json rows = nlohmann::ordered_json::parse(r.out);
  for (bool dedup : {false, true}) {
    const nlohmann::ordered_json& direct = RowOf(rows, "cities", "direct", dedup);
    ASSERT_TRUE(direct["unusable"].is_string());
    EXPECT_THAT(direct["unusable"].get<std::string>(), HasSubstr("too long"));
    EXPECT_TRUE(direct["hit_p50_ns"].is_null());
    EXPECT_FALSE(direct["recommended"].get<bool>());
    EXPECT_TRUE(RowOf(rows, "cities", "hashed", dedup)["unusable"].is_null());
    EXPECT_TRUE(RowOf(rows, "cities", "hashed", dedup)["hit_p50_ns"].is_number());
  }
  const ProcessResult table = Bench({"--data", file, "--maps", "cities"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("direct: cannot hold the map's data: "));
  EXPECT_THAT(table.out, HasSubstr("of the schemes that hold every key"));
}

// A user's own scheme (from --plugin-dir) is benched beside the built-in ones: schemes come from the registry.
TEST_F(CliBench, BenchesAUsersOwnScheme) {
  const ProcessResult r = Bench({"--data", data_, "--maps", "cities", "--format", "json", "--plugin-dir",
                                 std::string(PLANB_FIXTURE_DIR) + "/id_table"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::ordered_json rows = nlohmann::ordered_json::parse(r.out);
  std::set<std::string> schemes;
  for (const auto& row : rows) schemes.insert(row["scheme"].get<std::string>());
  EXPECT_EQ(schemes, (std::set<std::string>{"direct", "hashed", "hybrid", "id_table", "lookup_table", "variable"}));
  const nlohmann::ordered_json& own = RowOf(rows, "cities", "id_table", false);
  EXPECT_TRUE(own["hit_p50_ns"].is_number()) << own;
  EXPECT_EQ(own["hit_lookups"], 300);
}

// Whitespace-separated cells with their first and last column (table cells hold no spaces).
std::vector<std::pair<size_t, size_t>> Cells(const std::string& line) {
  std::vector<std::pair<size_t, size_t>> cells;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    cells.emplace_back(start, i);
  }
  return cells;
}

TEST_F(CliBench, TableColumnsAreAligned) {
  const ProcessResult r = Bench({"--data", data_, "--maps", "cities"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < r.out.size()) {
    const size_t end = r.out.find('\n', start);
    lines.push_back(r.out.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_GT(lines.size(), kRowsPerMap + 1);
  const auto header = Cells(lines[0]);
  const std::set<std::string> left = {"map", "scheme", "value_dedup", "configured", "recommended"};
  for (size_t n = 1; n <= kRowsPerMap; ++n) {
    const auto cells = Cells(lines[n]);
    ASSERT_EQ(cells.size(), header.size()) << lines[n];
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string name = lines[0].substr(header[c].first, header[c].second - header[c].first);
      if (left.count(name)) {
        EXPECT_EQ(cells[c].first, header[c].first) << name << " in: " << lines[n];
      } else {
        EXPECT_EQ(cells[c].second, header[c].second) << name << " in: " << lines[n];
      }
    }
  }
  EXPECT_EQ(lines[kRowsPerMap + 1], "");
  EXPECT_THAT(r.out, HasSubstr("cities (state, configured hashed): recommended "));
  EXPECT_THAT(r.out, HasSubstr("Lookups measured per scheme and run: hit_lookups and miss_lookups (up to 300 each)"));
}

// The chart as an XML parser sees it: the svg root, a legend, one panel per map, labelled axes.
struct ChartCounts {
  int depth = 0;
  std::string root;
  int panels = 0;
  int legends = 0;
  std::string text;
};

TEST_F(CliBench, ChartIsSvgWithAPanelPerMapAndALegend) {
  const std::string chart = env_.dir() + "/out.svg";
  const ProcessResult r = Bench({"--data", data_, "--chart", chart, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(chart + ".tmp"));
  const std::string svg = ReadFile(chart);
  ChartCounts counts;
  XML_Parser parser = XML_ParserCreateNS(nullptr, ' ');
  XML_SetUserData(parser, &counts);
  XML_SetElementHandler(
      parser,
      [](void* data, const XML_Char* name, const XML_Char** attributes) {
        auto* c = static_cast<ChartCounts*>(data);
        if (c->depth++ == 0) c->root = name;
        for (int i = 0; attributes[i] != nullptr; i += 2) {
          if (std::string(attributes[i]) != "class") continue;
          c->panels += std::string(attributes[i + 1]) == "panel";
          c->legends += std::string(attributes[i + 1]) == "legend";
        }
      },
      [](void* data, const XML_Char*) { --static_cast<ChartCounts*>(data)->depth; });
  XML_SetCharacterDataHandler(parser, [](void* data, const XML_Char* s, int n) {
    static_cast<ChartCounts*>(data)->text.append(s, static_cast<size_t>(n));
  });
  ASSERT_EQ(XML_Parse(parser, svg.data(), static_cast<int>(svg.size()), XML_TRUE), XML_STATUS_OK)
      << XML_ErrorString(XML_GetErrorCode(parser));
  XML_ParserFree(parser);
  EXPECT_EQ(counts.root, "http://www.w3.org/2000/svg svg");
  EXPECT_EQ(counts.panels, 3);
  EXPECT_EQ(counts.legends, 1);
  for (const char* label : {"hit lookup (ns)", "bytes per row", "hit lookup p50", "hit lookup p99", "scheme",
                            "map cities (state)", "map statuses (state)", "map visits (temporal)"}) {
    EXPECT_THAT(counts.text, HasSubstr(label));
  }
}

// --- bad input: a clear error naming the input, exit 2, no scratch left ---

TEST_F(CliBench, RefusesAFileWithNoUsableRows) {
  const std::string empty = env_.Write("empty.xml", ReferenceData(Ref("nosuchmap", "k", "v")));
  ExpectBadInput({"--data", data_, empty}, "empty.xml: no usable rows");
}

TEST_F(CliBench, RefusesAMapNotInTheFiles) {
  const std::string cities = env_.Write("cities.xml", ReferenceData(Ref("cities", "Paris", "France")));
  ExpectBadInput({"--data", cities, "--maps", "cities,visits"}, "map 'visits' has no records in the files");
}

TEST_F(CliBench, RefusesAnUnknownMap) {
  ExpectBadInput({"--data", data_, "--maps", "cities,nosuch"}, "unknown map 'nosuch'");
  ExpectBadInput({"--data", data_, "--maps", "ranges"}, "map 'ranges' is of type 'ranged', which takes no key scheme");
}

TEST_F(CliBench, RefusesAnUnwritableScratchAndMakesAMissingOne) {
  const std::string file = env_.Write("a-file", "not a directory");
  ExpectBadInput({"--data", data_, "--scratch", file + "/sub"}, "--scratch " + file + "/sub: cannot make");
  // A missing directory is made, with its parents (as conform's --scratch is), and left behind empty.
  const ProcessResult r = Bench({"--data", data_, "--scratch", env_.dir() + "/missing/too"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_directory(env_.dir() + "/missing/too"));
  EXPECT_TRUE(fs::is_empty(env_.dir() + "/missing/too"));
}

TEST_F(CliBench, RefusesLookupsAndRunsThatAreNotPositiveNumbers) {
  for (const char* bad : {"0", "abc", "-5", "1e3", ""}) {
    const ProcessResult r = Bench({"--data", data_}, bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--lookups: '" + std::string(bad) + "' is not a whole number")) << bad;
  }
  ExpectBadInput({"--data", data_, "--runs", "0"}, "--runs: '0' is not a whole number");
  EXPECT_THAT(VisibleEntries(scratch_), IsEmpty());
}

TEST_F(CliBench, RefusesAnUnwritableChart) {
  const std::string file = env_.Write("a-file", "not a directory");
  ExpectBadInput({"--data", data_, "--chart", file + "/out.svg"}, "--chart " + file + "/out.svg: cannot write");
  ExpectBadInput({"--data", data_, "--chart", env_.dir()}, ": a directory");
}

TEST_F(CliBench, RefusesAMissingData) {
  ExpectBadInput({}, "--data FILE.xml... is required");
  ExpectBadInput({"--data", env_.dir() + "/nosuch.xml"}, "nosuch.xml: No such file or directory");
  ExpectBadInput({"--data", data_, "--format", "yaml"}, "--format: 'yaml'");
}

// SIGINT mid-run: the scratch home is removed and the exit status is 130.
TEST_F(CliBench, SigintRemovesTheScratchAndExits130) {
  std::string body;
  for (int i = 0; i < 20000; ++i) body += Ref("cities", "city-" + std::to_string(i), "country") + "\n";
  const std::string big = env_.Write("big.xml", ReferenceData(body));
  std::vector<std::string> words{PLANB_BINARY, "--home", env_.home(), "--config", env_.config(), "bench",
                                 "--data",     big,      "--runs",    "1000",     "--scratch",   scratch_};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string err_file = env_.dir() + "/stderr";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    if (err < 0 || null < 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  bool reaped = false;
  auto ended = [&] {
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) reaped = true;
    return reaped;
  };
  // Interrupted mid-trial: once the scratch home holds a trial's directory.
  ASSERT_TRUE(WaitUntil([&] { return !VisibleEntries(scratch_).empty() || ended(); }, {scratch_}, 60s, pid))
      << "no scratch directory appeared";
  ASSERT_FALSE(reaped) << ReadFile(err_file);
  const std::string home = scratch_ + "/" + VisibleEntries(scratch_).front();
  const bool started = WaitUntil([&] { return !VisibleEntries(home).empty() || ended(); }, {home}, 60s, pid);
  ASSERT_TRUE(started) << "no trial started";
  ASSERT_FALSE(reaped) << "the run ended before it could be interrupted: " << ReadFile(err_file);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_TRUE(WaitUntil(ended, {}, 60s, pid)) << "still running after SIGINT";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130) << ReadFile(err_file);
  EXPECT_THAT(VisibleEntries(scratch_), IsEmpty());
  EXPECT_THAT(ReadFile(err_file), HasSubstr("interrupted"));
}

}  // namespace
}  // namespace planb::testing
