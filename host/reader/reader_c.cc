// planb/reader_c.h over planb::Reader: handles wrap the C++ objects, results are copied field by field (the
// views stay the Reader's), and no exception crosses into C.
#include "planb/reader_c.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "planb/reader.h"

struct planb_reader_options_t {
  planb::ReaderOptions options;
};

struct planb_reader_t {
  std::unique_ptr<planb::Reader> reader;
  std::vector<std::string> map_names;  // the configured maps, in Stats' order: planb_map_stats_t::map points here
};

namespace {

std::string_view View(const char* data, size_t len) {
  return data == nullptr ? std::string_view() : std::string_view(data, len);
}

void CopyError(const std::string& message, char* error, size_t error_len) {
  if (error == nullptr || error_len == 0) return;
  const size_t n = std::min(message.size(), error_len - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

int Fail(const planb::Status& status, char* error, size_t error_len) {
  CopyError(status.message(), error, error_len);
  return static_cast<int>(status.code());
}

void Fill(const planb::LookupResult& from, planb_result_t* to) {
  to->code = static_cast<int>(from.code);
  to->value = reinterpret_cast<const char*>(from.value.data);
  to->value_len = from.value.size;
  to->session_start_ms = from.session_start_ms;
  to->session_end_ms = from.session_end_ms;
  to->error = from.error == nullptr ? "" : from.error;
  to->value_type = static_cast<int>(from.value_type);
}

planb::LookupTime TimeOf(const int64_t* time_ms) {
  return time_ms == nullptr ? planb::LookupTime::Now() : planb::LookupTime::At(*time_ms);
}

// The C++ types a batch is converted into, kept per thread so that a warm batch allocates nothing.
struct BatchBuffers {
  std::vector<planb::ReaderKey> keys;
  std::vector<planb::LookupResult> results;
};

// An exception (std::bad_alloc growing the buffers) as a result rather than a crash in the caller's process.
int Internal(const char* what, planb_result_t* results, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    results[i] = planb_result_t{static_cast<int>(planb::Code::kInternal), nullptr, 0, 0, 0, what,
                                static_cast<int>(planb::ValueType::kString)};
  }
  return static_cast<int>(planb::Code::kInternal);
}

}  // namespace

extern "C" {

planb_reader_options_t* planb_reader_options_create(void) { return new (std::nothrow) planb_reader_options_t(); }

void planb_reader_options_destroy(planb_reader_options_t* options) { delete options; }

void planb_reader_options_set_config(planb_reader_options_t* options, const char* path, size_t len) {
  options->options.config_path.assign(View(path, len));
}

void planb_reader_options_set_home(planb_reader_options_t* options, const char* path, size_t len) {
  options->options.home.assign(View(path, len));
}

void planb_reader_options_add_plugin_dir(planb_reader_options_t* options, const char* path, size_t len) {
  options->options.plugin_dirs.emplace_back(View(path, len));
}

void planb_reader_options_set_maintenance_interval_ms(planb_reader_options_t* options, int64_t interval_ms) {
  options->options.maintenance_interval_ms = interval_ms;
}

void planb_reader_options_set_remote(planb_reader_options_t* options, int remote) {
  options->options.remote = remote != 0;
}

void planb_reader_options_set_remote_connections(planb_reader_options_t* options, size_t count) {
  options->options.remote_connections = count;
}

planb_reader_t* planb_reader_open(const planb_reader_options_t* options, char* error, size_t error_len) {
  try {
    auto handle = std::make_unique<planb_reader_t>();
    const planb::Status s = planb::Reader::Open(options == nullptr ? planb::ReaderOptions() : options->options,
                                                &handle->reader);
    if (!s.ok()) {
      CopyError(s.message(), error, error_len);
      return nullptr;
    }
    for (planb::MapStats& map : handle->reader->Stats().maps) handle->map_names.push_back(std::move(map.map));
    return handle.release();
  } catch (const std::exception& e) {
    CopyError(std::string("planb_reader_open: ") + e.what(), error, error_len);
    return nullptr;
  }
}

void planb_reader_close(planb_reader_t* reader) { delete reader; }

int planb_reader_lookup(planb_reader_t* reader, const char* map, size_t map_len, const char* key, size_t key_len,
                        const int64_t* time_ms, planb_result_t* result) {
  try {
    Fill(reader->reader->Lookup(View(map, map_len), View(key, key_len), TimeOf(time_ms)), result);
  } catch (const std::exception&) {
    return Internal("planb_reader_lookup: out of memory or an internal error", result, 1);
  }
  return result->code;
}

int planb_reader_lookup_number(planb_reader_t* reader, const char* map, size_t map_len, int64_t number,
                               const int64_t* time_ms, planb_result_t* result) {
  try {
    Fill(reader->reader->Lookup(View(map, map_len), number, TimeOf(time_ms)), result);
  } catch (const std::exception&) {
    return Internal("planb_reader_lookup_number: out of memory or an internal error", result, 1);
  }
  return result->code;
}

int planb_reader_lookup_many(planb_reader_t* reader, const char* map, size_t map_len, const planb_key_t* keys,
                             size_t count, planb_result_t* results) {
  thread_local BatchBuffers buffers;
  try {
    if (buffers.keys.size() < count) {
      buffers.keys.resize(count);
      buffers.results.resize(count);
    }
  } catch (const std::bad_alloc&) {
    return Internal("planb_reader_lookup_many: out of memory", results, count);
  }
  for (size_t i = 0; i < count; ++i) {
    const planb_key_t& key = keys[i];
    buffers.keys[i] = planb::ReaderKey{View(key.key, key.key_len), key.number,
                                       key.has_time ? planb::LookupTime::At(key.time_ms) : planb::LookupTime::Now()};
  }
  planb::Code code = planb::Code::kOk;
  try {
    code = reader->reader->LookupMany(View(map, map_len), buffers.keys.data(), count, buffers.results.data());
  } catch (const std::exception&) {
    return Internal("planb_reader_lookup_many: out of memory or an internal error", results, count);
  }
  for (size_t i = 0; i < count; ++i) Fill(buffers.results[i], &results[i]);
  return static_cast<int>(code);
}

int planb_reader_prepare(planb_reader_t* reader, const char* map, size_t map_len, char* error, size_t error_len) {
  return Fail(reader->reader->Prepare(View(map, map_len)), error, error_len);
}

int planb_reader_refresh(planb_reader_t* reader, const char* map, size_t map_len, char* error, size_t error_len) {
  return Fail(reader->reader->Refresh(View(map, map_len)), error, error_len);
}

int planb_reader_maintain(planb_reader_t* reader, char* error, size_t error_len) {
  return Fail(reader->reader->Maintain(), error, error_len);
}

int planb_reader_describe(planb_reader_t* reader, const char* map, size_t map_len, planb_map_info_t* info,
                          char* error, size_t error_len) {
  planb::MapInfo described;
  const planb::Status s = reader->reader->Describe(View(map, map_len), &described);
  if (!s.ok()) return Fail(s, error, error_len);
  info->number_keys = described.number_keys ? 1 : 0;
  info->uses_time = described.uses_time ? 1 : 0;
  info->has_value = described.has_value ? 1 : 0;
  info->has_session = described.has_session ? 1 : 0;
  return PLANB_OK;
}

int planb_reader_stats(planb_reader_t* reader, planb_map_stats_t* stats, size_t capacity, size_t* count,
                       uint64_t* unknown_map_lookups) {
  try {
    const planb::ReaderStats figures = reader->reader->Stats();
    const size_t n = std::min(capacity, figures.maps.size());
    for (size_t i = 0; i < n; ++i) {
      const planb::MapStats& from = figures.maps[i];
      planb_map_stats_t& to = stats[i];
      to = planb_map_stats_t();
      to.map = reader->map_names[i].c_str();  // the same maps in the same order as at open: the config's
      to.lookups = from.lookups;
      to.found = from.found;
      to.misses = from.misses;
      to.errors = from.errors;
      to.serving = from.serving ? 1 : 0;
      to.reads_snapshot = from.reads_snapshot ? 1 : 0;
      to.has_content_version = from.content_version.has_value() ? 1 : 0;
      to.content_version = from.content_version.value_or(0);
      to.has_snapshot_created = from.snapshot_created_ms.has_value() ? 1 : 0;
      to.snapshot_created_ms = from.snapshot_created_ms.value_or(0);
      to.refreshes = from.refreshes;
      to.refresh_failures = from.refresh_failures;
    }
    if (count != nullptr) *count = figures.maps.size();
    if (unknown_map_lookups != nullptr) *unknown_map_lookups = figures.unknown_map_lookups;
    return PLANB_OK;
  } catch (const std::exception&) {
    return PLANB_INTERNAL;  // out of memory copying the figures; nothing was written to a half-filled entry
  }
}

int planb_parse_time(const char* text, size_t len, int64_t* ms) {
  return planb::Reader::ParseTime(View(text, len), ms) ? PLANB_OK : PLANB_INVALID_ARGUMENT;
}

}  // extern "C"
