// `planb bench`'s figures as a table (aligned, the default), CSV (RFC 4180, one header line) or JSON (an array of
// objects, numbers as numbers, null where a figure is absent). One row per map x scheme x value_dedup setting;
// the field names are fixed (README.md, "planb bench").
#pragma once

#include <ostream>

#include "host/commands/row_formats.h"
#include "host/scheme_trial/bench_result.h"

namespace planb {

void PrintBenchResult(const BenchResult& result, OutputFormat format, std::ostream& out);

}  // namespace planb
