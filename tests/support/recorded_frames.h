// Protocol messages recorded from a release and kept in the repository (tests/compat/<release>/protocol/), so
// that the tests check what this build reads and writes against bytes a release really sent.
#pragma once

#include <string>
#include <vector>

namespace planb::testing {

// The frames of tests/compat/<name> (relative to that directory, e.g. "0.1.0/protocol/begin_v3.frames"): hex
// bytes, '#' to the end of a line is a comment, a line "--" ends a frame. A file that does not parse fails the
// calling test (ADD_FAILURE naming the file and line) and gives what was read up to there.
std::vector<std::string> ReadRecordedFrames(const std::string& name);

}  // namespace planb::testing
