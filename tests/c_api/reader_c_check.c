/* Drives planb/reader_c.h from C (C99): reader_c_check CONFIG HOME EMPTY_HOME. Prints one line per lookup, in a
   form the test (reader_c_test.cc) compares with what `planb lookup` prints for the same keys, then the errors,
   then the figures planb_reader_stats gives, then a lookup through EMPTY_HOME (the same config, no data: PLANB_NO_DATA, not a miss). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planb/reader_c.h"

static void Print(const char* label, int code, const planb_result_t* r) {
  if (code == PLANB_OK && r->value != NULL) {
    printf("%s: %d %.*s\n", label, code, (int)r->value_len, r->value);
  } else if (code == PLANB_OK) {
    printf("%s: %d session %lld %lld\n", label, code, (long long)r->session_start_ms, (long long)r->session_end_ms);
  } else {
    printf("%s: %d %s\n", label, code, r->error);
  }
}

static int64_t Time(const char* text) {
  int64_t ms = 0;
  if (planb_parse_time(text, strlen(text), &ms) != PLANB_OK) printf("bad time %s\n", text);
  return ms;
}

#define S(text) text, strlen(text)

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: reader_c_check CONFIG HOME EMPTY_HOME\n");
    return 2;
  }
  char error[512];
  planb_reader_options_t* options = planb_reader_options_create();
  planb_reader_options_set_config(options, S(argv[1]));
  planb_reader_options_set_home(options, S(argv[2]));
  planb_reader_options_set_maintenance_interval_ms(options, 0);
  planb_reader_t* reader = planb_reader_open(options, error, sizeof error);
  planb_reader_options_destroy(options);
  if (reader == NULL) {
    fprintf(stderr, "open: %s\n", error);
    return 1;
  }
  planb_result_t r;
  Print("text", planb_reader_lookup(reader, S("country_to_capital"), S("Japan"), NULL, &r), &r);
  Print("miss", planb_reader_lookup(reader, S("city_to_country"), S("Atlantis"), NULL, &r), &r);
  Print("number", planb_reader_lookup_number(reader, S("employeeIdToOffice"), 1555, NULL, &r), &r);
  int64_t at = Time("2024-02-01T00:00:00Z");
  Print("temporal", planb_reader_lookup(reader, S("user_to_department"), S("alice"), &at, &r), &r);
  at = Time("2024-01-15T00:00:00Z");
  Print("temporal_ranged", planb_reader_lookup_number(reader, S("ip_range_to_site"), 167887879, &at, &r), &r);
  at = Time("2024-01-01T09:10:00Z");
  Print("session", planb_reader_lookup(reader, S("user_app_sessions"), S("alice_payroll"), &at, &r), &r);
  /* The epoch is an instant like any other: asked about, not taken for "now". */
  at = 0;
  Print("epoch", planb_reader_lookup(reader, S("user_to_department"), S("alice"), &at, &r), &r);

  planb_key_t keys[3] = {{"Japan", 5, 0, 0, 0}, {"Atlantis", 8, 0, 0, 0}, {"Albania", 7, 0, 0, 0}};
  planb_result_t results[3];
  printf("many: %d\n", planb_reader_lookup_many(reader, S("country_to_capital"), keys, 3, results));
  for (int i = 0; i < 3; ++i) Print("many", results[i].code, &results[i]);

  planb_map_info_t info;
  int code = planb_reader_describe(reader, S("user_app_sessions"), &info, error, sizeof error);
  printf("describe: %d number_keys %d uses_time %d has_value %d has_session %d\n", code, info.number_keys,
         info.uses_time, info.has_value, info.has_session);

  /* Errors: each says what is wrong. */
  Print("unknown map", planb_reader_lookup(reader, S("no_such_map"), S("k"), NULL, &r), &r);
  Print("text key on a number map", planb_reader_lookup(reader, S("employeeIdToOffice"), S("1555"), NULL, &r), &r);
  code = planb_reader_describe(reader, S("no_such_map"), &info, error, sizeof error);
  printf("describe unknown: %d %s\n", code, error);
  int64_t ms = 0;
  printf("bad time: %d\n", planb_parse_time(S("yesterday"), &ms));

  /* Stats: the count first (capacity 0), then every map; each answer above counted once. */
  size_t maps = 0;
  uint64_t unknown = 0;
  code = planb_reader_stats(reader, NULL, 0, &maps, NULL);
  planb_map_stats_t* stats = calloc(maps, sizeof *stats);
  if (stats == NULL) return 1;
  code = planb_reader_stats(reader, stats, maps, &maps, &unknown);
  printf("stats: %d maps %zu unknown map lookups %llu\n", code, maps, (unsigned long long)unknown);
  for (size_t i = 0; i < maps; ++i) {
    const planb_map_stats_t* m = &stats[i];
    printf("stats %s: lookups %llu found %llu misses %llu errors %llu serving %d snapshot %d version %d %llu "
           "created %d refreshes %llu failures %llu\n",
           m->map, (unsigned long long)m->lookups, (unsigned long long)m->found, (unsigned long long)m->misses,
           (unsigned long long)m->errors, m->serving, m->reads_snapshot, m->has_content_version,
           (unsigned long long)m->content_version, m->has_snapshot_created, (unsigned long long)m->refreshes,
           (unsigned long long)m->refresh_failures);
  }
  free(stats);
  planb_reader_close(reader);

  options = planb_reader_options_create();
  planb_reader_options_set_config(options, S("/nonexistent/planb.ini"));
  char small[16];
  reader = planb_reader_open(options, small, sizeof small);
  planb_reader_options_destroy(options);
  printf("open missing config: %s, message cut to %zu bytes\n", reader == NULL ? "NULL" : "opened", strlen(small));

  options = planb_reader_options_create();
  planb_reader_options_set_config(options, S(argv[1]));
  planb_reader_options_set_home(options, S(argv[3]));
  reader = planb_reader_open(options, error, sizeof error);
  planb_reader_options_destroy(options);
  if (reader == NULL) {
    printf("open empty home: %s\n", error);
    return 1;
  }
  Print("no data", planb_reader_lookup(reader, S("country_to_capital"), S("Japan"), NULL, &r), &r);
  planb_reader_close(reader);
  return 0;
}
