// libzip (and, through it, OpenSSL's libcrypto, bzip2, xz and zstd), opened when a command first reads or
// writes a zip: batches, snapshots, backups.
#include <zip.h>

#include "host/on_demand/on_demand_library.h"

namespace {
planb::OnDemandLibrary& Zip() {
  static planb::OnDemandLibrary library(PLANB_LIBZIP_SONAME, "zip files (batches, snapshots, backups)");
  return library;
}
}  // namespace

PLANB_ON_DEMAND(Zip, zip_t*, zip_open, (const char* path, int flags, int* error), (path, flags, error))
PLANB_ON_DEMAND(Zip, int, zip_close, (zip_t * archive), (archive))
PLANB_ON_DEMAND(Zip, void, zip_discard, (zip_t * archive), (archive))
PLANB_ON_DEMAND(Zip, zip_error_t*, zip_get_error, (zip_t * archive), (archive))
PLANB_ON_DEMAND(Zip, zip_int64_t, zip_get_num_entries, (zip_t * archive, zip_flags_t flags), (archive, flags))
PLANB_ON_DEMAND(Zip, const char*, zip_get_name, (zip_t * archive, zip_uint64_t index, zip_flags_t flags),
                (archive, index, flags))
PLANB_ON_DEMAND(Zip, void, zip_stat_init, (zip_stat_t * stat), (stat))
PLANB_ON_DEMAND(Zip, int, zip_stat_index, (zip_t * archive, zip_uint64_t index, zip_flags_t flags, zip_stat_t* stat),
                (archive, index, flags, stat))
PLANB_ON_DEMAND(Zip, zip_file_t*, zip_fopen_index, (zip_t * archive, zip_uint64_t index, zip_flags_t flags),
                (archive, index, flags))
PLANB_ON_DEMAND(Zip, zip_int64_t, zip_fread, (zip_file_t * file, void* buf, zip_uint64_t size), (file, buf, size))
PLANB_ON_DEMAND(Zip, int, zip_fclose, (zip_file_t * file), (file))
PLANB_ON_DEMAND(Zip, zip_error_t*, zip_file_get_error, (zip_file_t * file), (file))
PLANB_ON_DEMAND(Zip, zip_int64_t, zip_file_add,
                (zip_t * archive, const char* name, zip_source_t* source, zip_flags_t flags),
                (archive, name, source, flags))
PLANB_ON_DEMAND(Zip, int, zip_set_file_compression,
                (zip_t * archive, zip_uint64_t index, zip_int32_t method, zip_uint32_t level),
                (archive, index, method, level))
PLANB_ON_DEMAND(Zip, zip_source_t*, zip_source_buffer, (zip_t * archive, const void* data, zip_uint64_t size, int free),
                (archive, data, size, free))
PLANB_ON_DEMAND(Zip, zip_source_t*, zip_source_file_create,
                (const char* path, zip_uint64_t start, zip_int64_t length, zip_error_t* error),
                (path, start, length, error))
PLANB_ON_DEMAND(Zip, void, zip_source_free, (zip_source_t * source), (source))
PLANB_ON_DEMAND(Zip, void, zip_error_init_with_code, (zip_error_t * error, int code), (error, code))
PLANB_ON_DEMAND(Zip, void, zip_error_fini, (zip_error_t * error), (error))
PLANB_ON_DEMAND(Zip, const char*, zip_error_strerror, (zip_error_t * error), (error))
PLANB_ON_DEMAND(Zip, int, zip_error_code_zip, (const zip_error_t* error), (error))
PLANB_ON_DEMAND(Zip, int, zip_error_code_system, (const zip_error_t* error), (error))
PLANB_ON_DEMAND(Zip, int, zip_error_system_type, (const zip_error_t* error), (error))
PLANB_ON_DEMAND(Zip, void, zip_error_init, (zip_error_t * error), (error))
PLANB_ON_DEMAND(Zip, void, zip_error_set, (zip_error_t * error, int zip_code, int system_code),
                (error, zip_code, system_code))
PLANB_ON_DEMAND(Zip, zip_int64_t, zip_error_to_data, (const zip_error_t* error, void* data, zip_uint64_t length),
                (error, data, length))
PLANB_ON_DEMAND(Zip, zip_source_t*, zip_source_function, (zip_t * archive, zip_source_callback callback, void* userdata),
                (archive, callback, userdata))
