// Replicas converge under a random schedule (issue 39): two processing nodes load at once, deletions (by key, at
// a time among the rows') and replacements of the State map come in between, either storage node is killed with
// SIGKILL between steps and restarted later, loads go on with write_quorum = 1, and after the last step both
// nodes, by catch-up alone, hold byte-identical rows (tombstones included) equal to one node that ran every load,
// deletion and replacement once, in the order given or reversed: State keeps the latest effective time,
// histogram counts add (totals exact), deletions and replacements shadow what is older. Seeded and reproducible:
// PLANB_SCHEDULE_SEED picks one seed, PLANB_SCHEDULE_STEPS a longer schedule (the suite runs three short ones).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/cluster_fixture.h"
#include "support/node_process.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::ProcessResult;
using ::planb::testing::WaitUntil;
using ::planb::testing::WriteFile;

unsigned EnvNumber(const char* name, unsigned fallback) {
  const char* text = std::getenv(name);
  return text == nullptr ? fallback : static_cast<unsigned>(std::strtoul(text, nullptr, 10));
}

class Schedule {
 public:
  Schedule(ClusterFixture& cluster, unsigned seed) : cluster_(cluster), random_(seed), seed_(seed) {}

  // A file of State rows (a few keys, random times and values, some at equal times) and histogram events.
  std::string NewFile(const std::string& loader) {
    const int n = static_cast<int>(files_.size());
    std::string xml = "<referenceData xmlns=\"reference-data:2\">\n";
    std::uniform_int_distribution<int> key(0, 7);
    std::uniform_int_distribution<int> minute(0, 20);
    std::uniform_int_distribution<int> hour(0, 4);
    for (int i = 0; i < 12; ++i) {
      xml += "<reference><map>city_to_country</map><time>2024-03-01T10:" + Two(minute(random_)) +
             ":00Z</time><key>city-" + std::to_string(key(random_)) + "</key><value>" + loader + "-" +
             std::to_string(n) + "-" + std::to_string(i) + "</value></reference>\n";
      xml += "<reference><map>hits</map><time>2024-03-01T1" + std::to_string(hour(random_)) +
             ":00:00Z</time><key>page-" + std::to_string(key(random_)) + "</key></reference>\n";
    }
    xml += "</referenceData>\n";
    files_.push_back(cluster_.dir() + "/s" + std::to_string(seed_) + "-" + std::to_string(n) + ".xml");
    WriteFile(files_.back(), xml);
    return files_.back();
  }

  // A replacement of city_to_country: a few keys at times among the loads'.
  std::string NewReplacementFile() {
    const int n = static_cast<int>(files_.size());
    std::string xml = "<referenceData xmlns=\"reference-data:2\">\n";
    std::uniform_int_distribution<int> key(0, 7);
    std::uniform_int_distribution<int> minute(0, 20);
    for (int i = 0; i < 4; ++i) {
      xml += "<reference><map>city_to_country</map><time>2024-03-01T10:" + Two(minute(random_)) +
             ":00Z</time><key>city-" + std::to_string(key(random_)) + "</key><value>release-" + std::to_string(n) +
             "-" + std::to_string(i) + "</value></reference>\n";
    }
    xml += "</referenceData>\n";
    files_.push_back(cluster_.dir() + "/s" + std::to_string(seed_) + "-" + std::to_string(n) + "-release.xml");
    WriteFile(files_.back(), xml);
    return files_.back();
  }

  // Maybe a deletion (of one key of either map, at a time among the rows') or a replacement, from proc2.
  // Steps 1 and 2 always replace and delete by value, so that every seed has both.
  ::testing::AssertionResult MaybeDeleteOrReplace(unsigned step) {
    std::vector<std::string> command;
    const int drawn = std::uniform_int_distribution<int>(0, 4)(random_);
    const int what = step == 1 ? 2 : step == 2 ? 3 : drawn;
    const std::string key = std::to_string(std::uniform_int_distribution<int>(0, 7)(random_));
    if (what == 0) {
      command = {"delete", "city_to_country", "--where", "Key = 'city-" + key + "'", "--effective-time",
                 "2024-03-01T10:" + Two(std::uniform_int_distribution<int>(0, 20)(random_)) + ":30Z"};
    } else if (what == 1) {
      command = {"delete", "hits", "--where", "Key = 'page-" + key + "'", "--effective-time",
                 "2024-03-01T1" + std::to_string(std::uniform_int_distribution<int>(0, 4)(random_)) + ":30:00Z"};
    } else if (what == 2) {
      command = {"load", "--replace", NewReplacementFile()};
    } else if (what == 3 && !files_.empty()) {
      // By value: one a load of this schedule gave (loader-file-record), so it may be a key's newer value or an
      // older one, merged before or after the deletion on each node.
      const int file = std::uniform_int_distribution<int>(0, static_cast<int>(files_.size()) - 1)(random_);
      const int record = std::uniform_int_distribution<int>(0, 11)(random_);
      command = {"delete", "city_to_country", "--where",
                 "Value = '" + std::string(file % 2 == 0 ? "proc" : "proc2") + "-" + std::to_string(file) + "-" +
                     std::to_string(record) + "' or Value startsWith 'release-" + std::to_string(file) + "-'",
                 "--effective-time", "2024-03-01T10:" + Two(std::uniform_int_distribution<int>(5, 25)(random_)) +
                     ":30Z"};
    } else {
      return ::testing::AssertionSuccess();
    }
    const ProcessResult r = cluster_.RunOnReader("proc2", command);
    if (r.exit_code != 0) {
      return ::testing::AssertionFailure() << "seed " << seed_ << ": " << command[0] << " failed with nodes up "
                                           << up_[0] << "," << up_[1] << ":\n" << r.out << r.err;
    }
    commands_.push_back(command);
    ++(command[0] == "delete" ? deletions_ : replacements_);
    return ::testing::AssertionSuccess();
  }

  // One step: both processing nodes load a new file at once, maybe a deletion or replacement follows, then maybe
  // a node dies or comes back.
  ::testing::AssertionResult Step(unsigned step) {
    const std::string a = NewFile("proc");
    const std::string b = NewFile("proc2");
    ProcessResult from_a;
    ProcessResult from_b;
    std::thread first([&] { from_a = cluster_.Load({a}); });
    std::thread second([&] { from_b = cluster_.RunOnReader("proc2", {"load", b}); });
    first.join();
    second.join();
    for (const ProcessResult* r : {&from_a, &from_b}) {
      if (r->exit_code != 0) {
        return ::testing::AssertionFailure() << "seed " << seed_ << ": a load failed with nodes up " << up_[0] << ","
                                             << up_[1] << ":\n" << r->out << r->err;
      }
    }
    commands_.push_back({"load", a});
    commands_.push_back({"load", b});
    if (::testing::AssertionResult done = MaybeDeleteOrReplace(step); !done) return done;
    std::uniform_int_distribution<int> action(0, 3);
    const int node = std::uniform_int_distribution<int>(0, 1)(random_);
    switch (action(random_)) {
      case 0:  // kill -9, keeping one node up so that the next loads have their quorum
        if (up_[node] && up_[1 - node]) {
          cluster_.process(node).Kill();
          up_[node] = false;
        }
        break;
      case 1:
        if (!up_[node]) {
          if (!cluster_.StartNode(node)) return ::testing::AssertionFailure() << cluster_.process(node).log();
          up_[node] = true;
        }
        break;
      default:
        break;
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult StartAll() {
    for (int i = 0; i < 2; ++i) {
      if (!up_[i] && !cluster_.StartNode(i)) return ::testing::AssertionFailure() << cluster_.process(i).log();
      up_[i] = true;
    }
    return ::testing::AssertionSuccess();
  }

  // Every load, deletion and replacement run, in order, as `planb` arguments.
  const std::vector<std::vector<std::string>>& commands() const { return commands_; }
  int deletions() const { return deletions_; }
  int replacements() const { return replacements_; }

 private:
  static std::string Two(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

  ClusterFixture& cluster_;
  std::mt19937 random_;
  unsigned seed_;
  std::vector<std::string> files_;
  std::vector<std::vector<std::string>> commands_;
  int deletions_ = 0;
  int replacements_ = 0;
  bool up_[2] = {true, true};
};

void RunSchedule(unsigned seed, unsigned steps) {
  SCOPED_TRACE("PLANB_SCHEDULE_SEED=" + std::to_string(seed));
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  cluster.top_level_extra = "write_quorum = 1\ncatch_up_interval = 200ms\n";
  cluster.ReserveEndpoints();
  cluster.WriteReaderConfig("proc2");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  Schedule schedule(cluster, seed);
  for (unsigned step = 0; step < steps; ++step) ASSERT_TRUE(schedule.Step(step)) << "step " << step;
  ASSERT_TRUE(schedule.StartAll());
  // Each seed of the suite gives both kinds (the schedule is deterministic for a seed).
  EXPECT_GT(schedule.deletions(), 0);
  EXPECT_GT(schedule.replacements(), 0);
  const bool converged = WaitUntil(
      [&] {
        return DumpBatchIds(cluster.home(0)) == DumpBatchIds(cluster.home(1)) && cluster.Dump(0) == cluster.Dump(1);
      },
      {cluster.process(0).log_file(), cluster.process(1).log_file()}, std::chrono::seconds(90));
  ASSERT_TRUE(converged) << "node1:\n" << cluster.process(0).log() << "\nnode2:\n" << cluster.process(1).log();
  // Every batch merged on both, exactly once: the rows of one node that ran every command, in the order given
  // and reversed (merges commute, deletions and replacements included).
  EXPECT_EQ(cluster.Dump(0), cluster.ReferenceDumpOfCommands(schedule.commands()));
  std::vector<std::vector<std::string>> reversed(schedule.commands().rbegin(), schedule.commands().rend());
  EXPECT_EQ(cluster.Dump(1), cluster.ReferenceDumpOfCommands(reversed));
}

TEST(ConvergenceSchedule, RandomSchedulesOfLoadsDeletionsReplacementsAndKillsEndWithIdenticalNodes) {
  const unsigned steps = EnvNumber("PLANB_SCHEDULE_STEPS", 6);
  if (std::getenv("PLANB_SCHEDULE_SEED") != nullptr) {
    RunSchedule(EnvNumber("PLANB_SCHEDULE_SEED", 1), steps);
    return;
  }
  for (unsigned seed : {1u, 2u, 3u}) RunSchedule(seed, steps);
}

}  // namespace
}  // namespace planb
