// The project's example config (examples/planb.ini) with its home moved to `home`, written to `config`, and the
// example data (reference-data.xml, store-types.xml) loaded into it by the real planb: every store type with a
// lookup has data. For tests of the Reader's faces (C API, Python) against `planb lookup`.
#pragma once

#include <string>

#include "support/test_env.h"

namespace planb::testing {

// The load's result: exit 0 when the home holds the data.
inline ProcessResult WriteAndLoadExampleHome(const std::string& config, const std::string& home) {
  std::string text = ReadFile(std::string(PLANB_SOURCE_DIR) + "/examples/planb.ini");
  const std::string relative = "home = ../planb-home";
  text.replace(text.find(relative), relative.size(), "home = " + home);
  WriteFile(config, text);
  std::vector<std::string> args = {"--config", config, "load"};
  for (const char* file : {"reference-data.xml", "store-types.xml"}) {
    args.push_back(std::string(PLANB_SOURCE_DIR) + "/examples/data/" + file);
  }
  return RunPlanb(args);
}

}  // namespace planb::testing
