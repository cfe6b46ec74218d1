#include "host/kit/conform_rows.h"

#include "host/commands/row_formats.h"

namespace planb {

RowAxes RowAxes::Of(const PluginDescriptor& type) {
  RowAxes axes;
  bool effective = false;
  bool start = false;
  for (uint32_t i = 0; i < type.field_count; ++i) {
    switch (type.fields[i].field) {
      case RowField::kKey:
        axes.key = true;
        break;
      case RowField::kKeyStart:
        axes.number = true;
        break;
      case RowField::kEffectiveTime:
        effective = true;
        break;
      case RowField::kStart:
        start = true;
        break;
      default:
        break;
    }
  }
  axes.time = start ? Time::kStart : effective ? Time::kEffective : Time::kNone;
  return axes;
}

bool RowAxes::Matches(const ScanBounds& bounds, const Row& row) const {
  if (bounds.has_key && (!key || row.key.view() != bounds.key.view())) return false;
  if (bounds.has_number_bounds &&
      (!number || row.range_from < bounds.number_min || row.range_from > bounds.number_max)) {
    return false;
  }
  if (bounds.has_time_bounds) {
    if (time == Time::kNone) return false;
    const int64_t t = TimeOf(row);
    if (t < bounds.time_min || t > bounds.time_max) return false;
  }
  return true;
}

LookupKey RowAxes::LookupOf(const Row& row) const {
  LookupKey lookup;
  if (key) lookup.key = row.key;
  if (number) lookup.number = row.range_from;
  lookup.time_ms = TimeOf(row);
  return lookup;
}

std::string RowLine(const Row& row, const PluginDescriptor& type) {
  std::string line;
  for (uint32_t i = 0; i < type.field_count; ++i) {
    if (i > 0) line += ',';
    line += CsvField(FieldText(row, type.fields[i], i));
  }
  return line;
}

std::string HeaderLine(const PluginDescriptor& type) {
  std::string line;
  for (uint32_t i = 0; i < type.field_count; ++i) {
    if (i > 0) line += ',';
    line += CsvField(type.fields[i].name);
  }
  return line;
}

Status ScanLines(const MapEnv& env, const ScanRequest& request, std::vector<std::string>* lines) {
  lines->clear();
  const PluginDescriptor& type = env.plugins().type_descriptor();
  ScanStats stats;
  return ScanMap(
      env, request,
      [&](const Row& row) {
        lines->push_back(RowLine(row, type));
        return true;
      },
      &stats);
}

}  // namespace planb
