#include "host/enrich/enrich_spec.h"

#include <algorithm>

#include "host/common/log_text.h"

namespace planb {

namespace {

const char kLookupForm[] = "expected TARGET=MAP:FIELD or TARGET=MAP:FIELD@TIMEFIELD, e.g. geo.country=ip_to_country:client.ip";

Status LookupError(std::string_view text, const std::string& what) {
  return Status::Invalid("--lookup '" + LogValue(text) + "': " + what);
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

// Whether path `a` is `b` or lies inside it (or the reverse): writing one would overwrite the other.
bool Overlap(const JsonPath& a, const JsonPath& b) {
  const size_t n = std::min(a.parts.size(), b.parts.size());
  return std::equal(a.parts.begin(), a.parts.begin() + static_cast<std::ptrdiff_t>(n), b.parts.begin());
}

}  // namespace

Status ParseLookup(std::string_view text, EnrichLookup* out) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos) return LookupError(text, std::string("no '=': ") + kLookupForm);
  const std::string_view target = text.substr(0, equals);
  const std::string_view rest = text.substr(equals + 1);
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return LookupError(text, std::string("no ':' after the map: ") + kLookupForm);
  const std::string_view map = rest.substr(0, colon);
  std::string_view field = rest.substr(colon + 1);
  std::optional<std::string_view> time_field;
  std::optional<std::string_view> member;
  const size_t at = field.find('@');  // the first: time fields are often named @timestamp
  if (at != std::string_view::npos) {
    time_field = field.substr(at + 1);
    field = field.substr(0, at);
  }
  const size_t hash = field.find('#');  // FIELD#MEMBER: the member of the answer to write
  if (hash != std::string_view::npos) {
    member = field.substr(hash + 1);
    field = field.substr(0, hash);
  }
  if (map.empty()) return LookupError(text, std::string("no map named: ") + kLookupForm);
  EnrichLookup lookup;
  Status s = ParseJsonPath(target, &lookup.target);
  if (s.ok()) s = ParseJsonPath(field, &lookup.field);
  if (s.ok() && time_field) {
    lookup.time_field.emplace();
    s = ParseJsonPath(*time_field, &*lookup.time_field);
  }
  if (s.ok() && member) {
    lookup.member.emplace();
    s = ParseJsonPath(*member, &*lookup.member).WithContext("#member");
  }
  if (!s.ok()) return LookupError(text, s.message() + "; " + kLookupForm);
  lookup.map = Lower(map);
  *out = std::move(lookup);
  return Status::Ok();
}

Status ParseFallback(std::string_view text, std::vector<EnrichLookup>* lookups) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return Status::Invalid("--fallback '" + LogValue(text) + "': expected TARGET=VALUE, e.g. geo.country=unknown");
  }
  const std::string_view target = text.substr(0, equals);
  for (EnrichLookup& lookup : *lookups) {
    if (lookup.target.text != target) continue;
    if (lookup.fallback) {
      return Status::Invalid("--fallback '" + LogValue(text) + "': " + lookup.target.text + " has a fallback already");
    }
    lookup.fallback = std::string(text.substr(equals + 1));
    return Status::Ok();
  }
  return Status::Invalid("--fallback '" + LogValue(text) + "': no --lookup writes " + LogValue(target));
}

Status ParseOnMiss(std::string_view text, OnMiss* out) {
  if (text == "keep") *out = OnMiss::kKeep;
  else if (text == "drop") *out = OnMiss::kDrop;
  else if (text == "tag") *out = OnMiss::kTag;
  else return Status::Invalid("--on-miss '" + LogValue(text) + "': expected keep, drop or tag");
  return Status::Ok();
}

Status ParseEventFormat(std::string_view option, std::string_view text, EventFormat* out) {
  if (text == "json") *out = EventFormat::kJson;
  else if (text == "csv") *out = EventFormat::kCsv;
  else return Status::Invalid(std::string(option) + " '" + LogValue(text) + "': expected json or csv");
  return Status::Ok();
}

Status CheckTargets(const std::vector<EnrichLookup>& lookups) {
  if (lookups.empty()) return Status::Invalid("no --lookup given: say what to look up, e.g. --lookup geo.country=ip_to_country:client.ip");
  for (size_t i = 0; i < lookups.size(); ++i) {
    if (lookups[i].target.parts[0] == "planb_miss") {
      return Status::Invalid("--lookup target planb_miss is where --on-miss tag writes: choose another");
    }
    for (size_t j = 0; j < i; ++j) {
      if (Overlap(lookups[i].target, lookups[j].target)) {
        return Status::Invalid("--lookup targets " + lookups[j].target.text + " and " + lookups[i].target.text +
                               " overlap: one would overwrite the other");
      }
    }
  }
  return Status::Ok();
}

}  // namespace planb
