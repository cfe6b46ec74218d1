// planb enrich's arguments (host/enrich/enrich_spec.h): every form, and every malformed one named.
#include "host/enrich/enrich_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace planb {
namespace {

using ::testing::HasSubstr;

TEST(EnrichSpec, ParsesLookups) {
  EnrichLookup l;
  ASSERT_TRUE(ParseLookup("geo.country=City_To_Country:client.city", &l).ok());
  EXPECT_EQ(l.target.parts, (std::vector<std::string>{"geo", "country"}));
  EXPECT_EQ(l.map, "city_to_country");
  EXPECT_EQ(l.field.text, "client.city");
  EXPECT_FALSE(l.time_field.has_value());
  ASSERT_TRUE(ParseLookup("dept=user_to_department:user@event.time", &l).ok());
  ASSERT_TRUE(l.time_field.has_value());
  EXPECT_EQ(l.time_field->parts, (std::vector<std::string>{"event", "time"}));
  // The first '@' ends FIELD: Logstash and Elastic name their time field @timestamp.
  ASSERT_TRUE(ParseLookup("s=sessions:client.ip@@timestamp", &l).ok());
  EXPECT_EQ(l.field.text, "client.ip");
  EXPECT_EQ(l.time_field->text, "@timestamp");
  // A member whose own name holds a dot, escaped.
  ASSERT_TRUE(ParseLookup(R"(geo\.cc=cities:client\.city)", &l).ok());
  EXPECT_EQ(l.target.parts, (std::vector<std::string>{"geo.cc"}));
  EXPECT_EQ(l.field.parts, (std::vector<std::string>{"client.city"}));
}

TEST(EnrichSpec, RefusesMalformedLookupsNamingThem) {
  for (const char* bad : {"", "geo", "geo=map", "=map:f", "geo=:f", "geo=map:", "geo=map:f@", "geo=map:a..b",
                          "g..x=map:f", "geo=map:@t"}) {
    EnrichLookup l;
    const Status s = ParseLookup(bad, &l);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.message(), HasSubstr(std::string("--lookup '") + bad + "'"));
    EXPECT_THAT(s.message(), HasSubstr("TARGET=MAP:FIELD"));
  }
  // Quoted escaped, the argument and the path alike (a backslash doubled).
  EnrichLookup l;
  const Status s = ParseLookup(R"(geo=map:a\b)", &l);
  EXPECT_THAT(s.message(), HasSubstr(R"(--lookup 'geo=map:a\\b': 'a\\b' is not a field path: a backslash escapes)"));
}

TEST(EnrichSpec, Fallbacks) {
  std::vector<EnrichLookup> lookups(1);
  ASSERT_TRUE(ParseLookup("geo.country=m:ip", &lookups[0]).ok());
  ASSERT_TRUE(ParseFallback("geo.country=un=known", &lookups).ok());
  EXPECT_EQ(lookups[0].fallback, "un=known");
  EXPECT_THAT(ParseFallback("geo.country=again", &lookups).message(), HasSubstr("has a fallback already"));
  EXPECT_THAT(ParseFallback("other=x", &lookups).message(), HasSubstr("no --lookup writes other"));
  EXPECT_THAT(ParseFallback("novalue", &lookups).message(), HasSubstr("expected TARGET=VALUE"));
  EXPECT_THAT(ParseFallback("=x", &lookups).message(), HasSubstr("expected TARGET=VALUE"));
}

TEST(EnrichSpec, OnMissAndFormats) {
  OnMiss on_miss = OnMiss::kKeep;
  EXPECT_TRUE(ParseOnMiss("tag", &on_miss).ok());
  EXPECT_EQ(on_miss, OnMiss::kTag);
  EXPECT_TRUE(ParseOnMiss("drop", &on_miss).ok());
  EXPECT_EQ(on_miss, OnMiss::kDrop);
  EXPECT_THAT(ParseOnMiss("Drop", &on_miss).message(), HasSubstr("expected keep, drop or tag"));
  EventFormat format = EventFormat::kJson;
  EXPECT_TRUE(ParseEventFormat("--input", "csv", &format).ok());
  EXPECT_EQ(format, EventFormat::kCsv);
  EXPECT_THAT(ParseEventFormat("--input", "xml", &format).message(), HasSubstr("--input 'xml': expected json or csv"));
}

TEST(EnrichSpec, TargetsMustNotOverlap) {
  const auto targets = [](std::vector<std::string> texts) {
    std::vector<EnrichLookup> lookups(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_TRUE(ParseLookup(texts[i], &lookups[i]).ok());
    return CheckTargets(lookups);
  };
  EXPECT_TRUE(targets({"a.x=m:f", "a.y=m:f", "b=n:g"}).ok());
  EXPECT_THAT(targets({"a=m:f", "a=n:g"}).message(), HasSubstr("targets a and a overlap"));
  EXPECT_THAT(targets({"geo=m:f", "geo.country=n:g"}).message(), HasSubstr("overlap"));
  EXPECT_THAT(targets({"planb_miss=m:f"}).message(), HasSubstr("--on-miss tag writes"));
  EXPECT_THAT(targets({}).message(), HasSubstr("no --lookup given"));
}

}  // namespace
}  // namespace planb
