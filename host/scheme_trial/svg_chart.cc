#include "host/scheme_trial/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "host/common/file_util.h"
#include "host/xml/xml_escape.h"

namespace planb {
namespace {

constexpr int kWidth = 960;
constexpr int kPanelHeight = 380;
constexpr int kTitleHeight = 40;
constexpr int kLegendHeight = 30;
constexpr int kPlotTop = 50;  // within a panel
constexpr int kPlotHeight = 200;
constexpr int kPlotLeft[2] = {80, 560};
constexpr int kPlotWidth = 360;
constexpr const char* kP50Colour = "#4477aa";
constexpr const char* kP99Colour = "#aad0ee";
constexpr const char* kBytesColour = "#cc6677";

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// A round axis maximum at or above `value` (1, 2 or 5 times a power of ten).
double NiceMax(double value) {
  if (value <= 0) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (value <= step * power) return step * power;
  }
  return 10 * power;
}

std::string Text(double x, double y, const std::string& text, const std::string& attributes = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\"" + (attributes.empty() ? "" : " " + attributes) + ">" +
         XmlEscape(text) + "</text>\n";
}

std::string Rect(double x, double y, double w, double h, const char* colour) {
  return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" + Num(h) + "\" fill=\"" +
         colour + "\"/>\n";
}

// Axes, ticks and labels of one plot whose y runs from 0 to `max` (`unit` on the y axis).
std::string Axes(int left, int top, double max, const std::string& y_label) {
  std::string svg;
  const int bottom = top + kPlotHeight;
  svg += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(left) + "\" y2=\"" + Num(bottom) +
         "\" stroke=\"#333\"/>\n";
  svg += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(left + kPlotWidth) + "\" y2=\"" +
         Num(bottom) + "\" stroke=\"#333\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double y = bottom - kPlotHeight * i / 4.0;
    svg += "<line x1=\"" + Num(left - 4) + "\" y1=\"" + Num(y) + "\" x2=\"" + Num(left + kPlotWidth) + "\" y2=\"" +
           Num(y) + "\" stroke=\"#ddd\"/>\n";
    char tick[32];
    std::snprintf(tick, sizeof tick, "%g", max * i / 4);
    svg += Text(left - 6, y + 4, tick, "text-anchor=\"end\"");
  }
  const double mid = top + kPlotHeight / 2.0;
  svg += Text(left - 56, mid, y_label,
              "text-anchor=\"middle\" transform=\"rotate(-90 " + Num(left - 56) + " " + Num(mid) + ")\"");
  svg += Text(left + kPlotWidth / 2.0, bottom + 112, "scheme", "text-anchor=\"middle\"");
  return svg;
}

std::string SchemeLabels(int left, int top, const std::vector<const SchemeResult*>& rows) {
  std::string svg;
  const double slot = static_cast<double>(kPlotWidth) / std::max<size_t>(1, rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const double x = left + slot * (static_cast<double>(i) + 0.5);
    const double y = top + kPlotHeight + 14;
    svg += Text(x, y, rows[i]->label() + (rows[i]->recommended ? " *" : ""),
                "text-anchor=\"end\" transform=\"rotate(-35 " + Num(x) + " " + Num(y) + ")\"");
  }
  return svg;
}

std::string Panel(const MapResult& map, int top) {
  std::vector<const SchemeResult*> rows;
  double max_ns = 0, max_bytes = 0;
  for (const SchemeResult& r : map.schemes) {
    if (!r.figures || r.figures->sizes.rows == 0) continue;
    rows.push_back(&r);
    max_ns = std::max({max_ns, r.figures->hits.p50_ns, r.figures->hits.p99_ns});
    max_bytes = std::max(max_bytes, r.bytes_per_row());
  }
  std::string svg = "<g class=\"panel\" id=\"" + XmlEscape("map-" + map.map) + "\">\n";
  svg += Text(20, top + 24, "map " + map.map + " (" + map.type + "): " + map.recommendation, "font-weight=\"bold\"");
  if (rows.empty()) {
    svg += Text(kPlotLeft[0], top + kPlotTop + 20, "no scheme could hold the map's keys");
    return svg + "</g>\n";
  }
  max_ns = NiceMax(max_ns);
  max_bytes = NiceMax(max_bytes);
  const int plot_top = top + kPlotTop;
  svg += Axes(kPlotLeft[0], plot_top, max_ns, "hit lookup (ns)");
  svg += Axes(kPlotLeft[1], plot_top, max_bytes, "bytes per row");
  const double slot = static_cast<double>(kPlotWidth) / rows.size();
  const double bottom = plot_top + kPlotHeight;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TrialFigures& f = *rows[i]->figures;
    const double bar = slot * 0.35;
    const double x = kPlotLeft[0] + slot * i + slot * 0.15;
    const double p50 = kPlotHeight * f.hits.p50_ns / max_ns;
    const double p99 = kPlotHeight * f.hits.p99_ns / max_ns;
    svg += Rect(x, bottom - p50, bar, p50, kP50Colour);
    svg += Rect(x + bar, bottom - p99, bar, p99, kP99Colour);
    const double bytes = kPlotHeight * rows[i]->bytes_per_row() / max_bytes;
    svg += Rect(kPlotLeft[1] + slot * i + slot * 0.2, bottom - bytes, slot * 0.6, bytes, kBytesColour);
  }
  svg += SchemeLabels(kPlotLeft[0], plot_top, rows);
  svg += SchemeLabels(kPlotLeft[1], plot_top, rows);
  return svg + "</g>\n";
}

std::string Legend(int y) {
  std::string svg = "<g class=\"legend\">\n";
  int x = 20;
  for (const auto& [colour, label] : {std::pair<const char*, const char*>{kP50Colour, "hit lookup p50"},
                                      {kP99Colour, "hit lookup p99"},
                                      {kBytesColour, "bytes on disk per row (data.mdb / rows)"}}) {
    svg += Rect(x, y, 14, 14, colour);
    svg += Text(x + 20, y + 12, label);
    // No text measuring in plain SVG: about 7 px per character at the chart's font size, then a gap.
    x += 20 + 7 * static_cast<int>(std::string_view(label).size()) + 40;
  }
  svg += Text(x, y + 12, "* recommended");
  return svg + "</g>\n";
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string kept;  // XML 1.0 holds no control characters but tab, newline and carriage return
  kept.reserve(text.size());
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') kept += c;
  }
  return XmlEscaped(kept, /*attribute=*/true);
}

std::string SvgChart(const BenchResult& result) {
  const int height = kTitleHeight + kLegendHeight + kPanelHeight * static_cast<int>(result.maps.size());
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + std::to_string(kWidth) +
         "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " +
         std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(20, 26, "planb bench: key schemes per map (median of " + std::to_string(result.runs) + " run(s))",
              "font-size=\"16\" font-weight=\"bold\"");
  svg += Legend(kTitleHeight);
  int top = kTitleHeight + kLegendHeight;
  for (const MapResult& map : result.maps) {
    svg += Panel(map, top);
    top += kPanelHeight;
  }
  return svg + "</svg>\n";
}

Status WriteSvgChart(const BenchResult& result, const std::string& path) {
  return WriteFileAtomically(path, SvgChart(result)).WithContext("--chart " + path);
}

}  // namespace planb
