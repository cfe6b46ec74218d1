/* planb/reader_c.h: planb::Reader from C, and through C from any language with a foreign-function interface
   (Python's ctypes, Go's cgo, Rust...). Part of libplanb_reader.so, beside planb/reader.h.

     planb_reader_options_t* options = planb_reader_options_create();
     planb_reader_options_set_config(options, "/etc/planb/planb.ini", 20);
     char error[256];
     planb_reader_t* reader = planb_reader_open(options, error, sizeof error);
     planb_reader_options_destroy(options);
     if (reader == NULL) { fprintf(stderr, "%s\n", error); ... }
     planb_result_t r;
     if (planb_reader_lookup(reader, "city_to_country", 15, "cardiff", 7, NULL, &r) == PLANB_OK)
       fwrite(r.value, 1, r.value_len, stdout);
     planb_reader_close(reader);

   Conventions (as LevelDB's c.h): opaque handles made by *_create / *_open and released by *_destroy / *_close;
   strings in are pointer + length (no NUL needed; bytes as they are); functions that can fail return a
   planb_code_t. Times are milliseconds since the epoch (the epoch itself and times before it are real
   instants): a lookup asks about "now" when its time pointer is NULL, never by a special value.
   Thread-safety, view lifetimes and costs are those of planb::Reader (planb/reader.h): any thread may call any
   function on one reader; the bytes a result points to stay valid on the calling thread until that thread's
   next lookup of the same map on this reader, or planb_reader_close. */
#ifndef PLANB_READER_C_H_
#define PLANB_READER_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLANB_C_EXPORT __attribute__((visibility("default")))

/* The codes of planb::Code (planb/status.h), same values. */
typedef enum {
  PLANB_OK = 0,
  PLANB_NOT_FOUND = 1, /* a miss: not an error */
  PLANB_INVALID_ARGUMENT = 2,
  PLANB_CORRUPTION = 3,
  PLANB_IO_ERROR = 4,
  PLANB_NOT_SUPPORTED = 5,
  PLANB_FULL = 6,
  PLANB_INTERNAL = 7,
  PLANB_PERMISSION_DENIED = 8,
  PLANB_NO_DATA = 9 /* the map has no data on this node: nothing was merged into it, or the home is another */
} planb_code_t;

typedef struct planb_reader_t planb_reader_t;
typedef struct planb_reader_options_t planb_reader_options_t;

/* Options: as planb::ReaderOptions (no config: ./planb.ini when it exists; no home: the config's). */
PLANB_C_EXPORT planb_reader_options_t* planb_reader_options_create(void);
PLANB_C_EXPORT void planb_reader_options_destroy(planb_reader_options_t* options);
PLANB_C_EXPORT void planb_reader_options_set_config(planb_reader_options_t* options, const char* path, size_t len);
PLANB_C_EXPORT void planb_reader_options_set_home(planb_reader_options_t* options, const char* path, size_t len);
PLANB_C_EXPORT void planb_reader_options_add_plugin_dir(planb_reader_options_t* options, const char* path,
                                                        size_t len);
/* How often the background thread refreshes snapshots and cleans up; 0: no thread (call planb_reader_maintain). */
PLANB_C_EXPORT void planb_reader_options_set_maintenance_interval_ms(planb_reader_options_t* options,
                                                                     int64_t interval_ms);

/* Remote mode (planb::ReaderOptions::remote): 1 = every lookup asks the config's storage nodes over connections
   kept open across lookups, 0 = read shards or snapshots here (the default). */
PLANB_C_EXPORT void planb_reader_options_set_remote(planb_reader_options_t* options, int remote);
/* Remote mode: how many sets of connections threads looking up at once share (default 4; 0 fails the open). */
PLANB_C_EXPORT void planb_reader_options_set_remote_connections(planb_reader_options_t* options, size_t count);

/* Opens a reader; NULL on failure, with the message (NUL-terminated, cut to fit) in `error` when it is not NULL
   and error_len > 0. */
PLANB_C_EXPORT planb_reader_t* planb_reader_open(const planb_reader_options_t* options, char* error,
                                                 size_t error_len);
/* Closes `reader` (NULL: nothing); every view it gave becomes invalid. */
PLANB_C_EXPORT void planb_reader_close(planb_reader_t* reader);

/* One key's answer. code PLANB_OK: found, and value/value_len (types with a value) or the session bounds (session
   types) are set; PLANB_NOT_FOUND: a miss, nothing else set; any other code: an error, described by `error`
   (NUL-terminated; valid like the value). */
typedef struct {
  int code; /* planb_code_t */
  const char* value;
  size_t value_len;
  int64_t session_start_ms;
  int64_t session_end_ms;
  const char* error; /* "" unless code is an error */
  int value_type;    /* how value is written (found, types with a value): 1 text, 2 an XML fragment, 3 JSON */
} planb_result_t;

/* A text key (state, temporal, session types) of `map`, asked about now (`time_ms` NULL) or at *time_ms (types
   with time only). Returns result->code. */
PLANB_C_EXPORT int planb_reader_lookup(planb_reader_t* reader, const char* map, size_t map_len, const char* key,
                                       size_t key_len, const int64_t* time_ms, planb_result_t* result);
/* A number key (ranged, temporal ranged types). */
PLANB_C_EXPORT int planb_reader_lookup_number(planb_reader_t* reader, const char* map, size_t map_len,
                                              int64_t number, const int64_t* time_ms, planb_result_t* result);

/* One key of a batch: `key`/`key_len` for text-keyed types (number 0), `number` for number-keyed ones (key NULL,
   key_len 0); has_time 0: now, 1: at time_ms. */
typedef struct {
  const char* key;
  size_t key_len;
  int64_t number;
  int has_time;
  int64_t time_ms;
} planb_key_t;

/* `count` keys of one map in one read transaction; results[i] answers keys[i]. Returns PLANB_OK when every
   result is found or a miss, else the first error (planb::Reader::LookupMany). Allocates nothing once a thread
   has looked up a batch this large. */
PLANB_C_EXPORT int planb_reader_lookup_many(planb_reader_t* reader, const char* map, size_t map_len,
                                            const planb_key_t* keys, size_t count, planb_result_t* results);

/* Opens `map` now (fetching its snapshot if needed), or fetches a newer snapshot now (refresh); the message of
   an error goes to `error` as for planb_reader_open. */
PLANB_C_EXPORT int planb_reader_prepare(planb_reader_t* reader, const char* map, size_t map_len, char* error,
                                        size_t error_len);
PLANB_C_EXPORT int planb_reader_refresh(planb_reader_t* reader, const char* map, size_t map_len, char* error,
                                        size_t error_len);
/* One maintenance pass (when the options' interval is 0). */
PLANB_C_EXPORT int planb_reader_maintain(planb_reader_t* reader, char* error, size_t error_len);

/* What `map` is: how to build its keys and what its results carry (1 or 0 each). */
typedef struct {
  int number_keys; /* looked up with planb_reader_lookup_number */
  int uses_time;   /* lookups may give a time */
  int has_value;   /* results carry value / value_len */
  int has_session; /* results carry session_start_ms / session_end_ms */
} planb_map_info_t;
PLANB_C_EXPORT int planb_reader_describe(planb_reader_t* reader, const char* map, size_t map_len,
                                         planb_map_info_t* info, char* error, size_t error_len);

/* One configured map's figures (planb::MapStats in planb/reader.h): counters since planb_reader_open, which only
   grow (each key of a batch counts once), and what lookups read now. A has_* field of 0 means the value beside it
   is absent (and set to 0): no sentinels. */
typedef struct {
  const char* map; /* NUL-terminated; valid until planb_reader_close */
  uint64_t lookups; /* found + misses + errors */
  uint64_t found;
  uint64_t misses;
  uint64_t errors;
  int serving;        /* an environment is open for lookups (0 before the first lookup, with no data, when idle) */
  int reads_snapshot; /* a local snapshot (not a storage node), else the shard itself */
  int has_content_version;
  uint64_t content_version; /* batches merged into what lookups read */
  int has_snapshot_created;
  int64_t snapshot_created_ms; /* when the snapshot read was installed here; its age is now minus this */
  uint64_t refreshes;          /* times lookups moved to a newer snapshot (or a compacted shard) */
  uint64_t refresh_failures;   /* refreshes that failed while the snapshot held kept serving */
} planb_map_stats_t;

/* Fills stats[0 .. min(capacity, maps)) in the config's order and sets *count (when not NULL) to the number of
   configured maps: call with capacity 0 to learn it. *unknown_map_lookups (when not NULL): lookups of maps the
   config does not have. Any thread, while lookups run. PLANB_OK, or PLANB_INTERNAL when out of memory. */
PLANB_C_EXPORT int planb_reader_stats(planb_reader_t* reader, planb_map_stats_t* stats, size_t capacity,
                                      size_t* count, uint64_t* unknown_map_lookups);

/* ISO-8601 text to milliseconds since the epoch, as `planb lookup --time` reads it: PLANB_OK, or
   PLANB_INVALID_ARGUMENT when `text` is not such a time. */
PLANB_C_EXPORT int planb_parse_time(const char* text, size_t len, int64_t* ms);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLANB_READER_C_H_ */
