// Each check of `planb conform` runs in a child process of its own (fork), so that what the plugin under test
// does wrong (a throw, an error, a crash, an exit, text on stdout) becomes that check's `not ok` lines with the
// plugin's whole message, and conform itself always finishes its TAP stream and removes its scratch directory.
// The child writes its verdict to a pipe, line by line; its stdout and stderr go to a log file in the scratch
// directory, whose last lines are shown when it dies. Call it from a single-threaded process holding no LMDB
// environment open (LMDB environments do not survive a fork); the child opens what it needs itself.
#pragma once

#include <functional>
#include <string>

#include "host/kit/conform_checks.h"
#include "planb/status.h"

namespace planb {

// What a check's child did: its verdict, or a Status that stops the whole run (bad input, this machine failing:
// what the check returned other than a verdict).
struct ChildVerdict {
  CheckResult result;
  Status stop;
};

// Runs `check` (which fills the CheckResult named `name`) in a forked child with stdout and stderr sent to `log`.
// A check that returns a non-ok Status stops the run when `stop_on_error` (setup: bad input), and otherwise fails
// with that Status' whole message (the plugin's error, named by the host's guards); a throw escaping the check,
// a death by a signal or an exit before the verdict was written fail it too, naming the signal and the log's
// last lines.
ChildVerdict RunCheckInChild(const std::string& name, const std::string& log, bool stop_on_error,
                             const std::function<Status(CheckResult*)>& check);

// The last `max_bytes` of the log at `path` (a child's output may be any size; only its end is shown), cut to
// start at a line when it was cut. Empty when it cannot be read.
std::string ReadLogTail(const std::string& path, size_t max_bytes);

}  // namespace planb
