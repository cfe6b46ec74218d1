// The chart of `planb bench --chart`: plain SVG 1.1 (no script, no external resources), one panel per map, each
// with two bar charts side by side: hit lookup p50 and p99 (ns) per scheme, and bytes on disk per row per scheme.
// Labelled axes, a legend, every text escaped.
#pragma once

#include <string>

#include "host/scheme_trial/bench_result.h"

namespace planb {

// The SVG document for `result`.
std::string SvgChart(const BenchResult& result);

// Writes SvgChart(result) to `path` through a temporary file in the same directory, renamed into place, so a
// reader never sees a half-written chart. Errors name `path`.
Status WriteSvgChart(const BenchResult& result, const std::string& path);

// `text` with &, <, >, " and ' as XML character references (and control characters other than tab dropped).
std::string XmlEscape(const std::string& text);

}  // namespace planb
