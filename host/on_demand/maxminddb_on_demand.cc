// libmaxminddb, opened when `planb load --format mmdb` reads a MaxMind DB file.
#include <maxminddb.h>

#include "host/on_demand/on_demand_library.h"

namespace {
planb::OnDemandLibrary& Maxminddb() {
  static planb::OnDemandLibrary library(PLANB_LIBMAXMINDDB_SONAME, "reading MaxMind DB files (load --format mmdb)");
  return library;
}
}  // namespace

PLANB_ON_DEMAND(Maxminddb, int, MMDB_open, (const char* const filename, uint32_t flags, MMDB_s* const mmdb),
                (filename, flags, mmdb))
PLANB_ON_DEMAND(Maxminddb, void, MMDB_close, (MMDB_s* const mmdb), (mmdb))
PLANB_ON_DEMAND(Maxminddb, int, MMDB_read_node,
                (const MMDB_s* const mmdb, uint32_t node_number, MMDB_search_node_s* const node),
                (mmdb, node_number, node))
PLANB_ON_DEMAND(Maxminddb, int, MMDB_get_entry_data_list,
                (MMDB_entry_s * start, MMDB_entry_data_list_s** const entry_data_list), (start, entry_data_list))
PLANB_ON_DEMAND(Maxminddb, void, MMDB_free_entry_data_list, (MMDB_entry_data_list_s* const entry_data_list),
                (entry_data_list))
PLANB_ON_DEMAND(Maxminddb, const char*, MMDB_strerror, (int error_code), (error_code))
