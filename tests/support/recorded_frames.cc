#include "tests/support/recorded_frames.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace planb::testing {

std::vector<std::string> ReadRecordedFrames(const std::string& name) {
  const std::string path = std::string(PLANB_SOURCE_DIR) + "/tests/compat/" + name;
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }
  std::vector<std::string> frames(1);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word == "--") {
        frames.emplace_back();
        continue;
      }
      if (word.size() != 2 || !std::isxdigit(static_cast<unsigned char>(word[0])) ||
          !std::isxdigit(static_cast<unsigned char>(word[1]))) {
        ADD_FAILURE() << path << ": line " << number << ": '" << word << "' is not a hex byte";
        return frames;
      }
      frames.back().push_back(static_cast<char>(std::stoi(word, nullptr, 16)));
    }
  }
  return frames;
}

}  // namespace planb::testing
