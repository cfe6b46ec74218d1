// What the Reader's tests share: a Reader opened on a config and home (the test fails on an error, and gets
// null), and on a cluster, a new capital of Atlantis loaded and merged on node 1 (a one-row change to watch
// snapshots and refreshes move).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "planb/reader.h"
#include "support/cluster_fixture.h"
#include "support/test_env.h"

namespace planb::testing {

inline std::unique_ptr<Reader> OpenTestReader(const std::string& config, const std::string& home,
                                              int64_t maintenance_interval_ms = 0) {
  ReaderOptions options;
  options.config_path = config;
  options.home = home;
  options.maintenance_interval_ms = maintenance_interval_ms;
  std::unique_ptr<Reader> reader;
  Status s = Reader::Open(options, &reader);
  EXPECT_TRUE(s.ok()) << s.message();
  return reader;
}

// Loads country_to_capital: Atlantis -> `capital` through node 1 and waits for its merge.
inline void LoadAtlantis(ClusterFixture& cluster, const std::string& capital) {
  const std::string update = cluster.dir() + "/atlantis-" + capital + ".xml";
  WriteFile(update,
            "<referenceData xmlns=\"reference-data:2\">\n  <reference><map>country_to_capital</map>"
            "<key>Atlantis</key><value>" +
                capital + "</value></reference>\n</referenceData>\n");
  const ProcessResult load = cluster.Load({update});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
}

}  // namespace planb::testing
