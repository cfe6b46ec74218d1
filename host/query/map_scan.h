// Scans a map's rows in LMDB key order within the range its store type derives from ScanBounds, decoding each
// row and handing the ones a filter accepts to a callback. One read transaction for the whole scan: the rows
// seen are one consistent snapshot, even while merges go on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "host/common/read_budget.h"
#include "host/storage/map_env.h"
#include "planb/store.h"

namespace planb {

struct ScanStats {
  bool empty_range = false;     // the bounds exclude every row: nothing was read
  bool has_lower = false;       // the LMDB key range scanned (hex in Describe())
  std::string lower;
  bool has_upper = false;
  std::string upper;
  uint64_t rows_examined = 0;   // rows read and decoded
  uint64_t rows_matched = 0;    // rows the filter accepted (and handed on, up to the limit)
  // Why a key condition of the query could not narrow the scan ("" = none did not): names the scheme.
  std::string not_narrowed;

  // "scan: keys 0a1b.. to 0a1c.. (narrowed), rows examined: 3, rows matched: 1"
  // "scan: all keys (full scan: scheme 'hashed' ...), rows examined: ..."
  std::string Describe() const;
};

struct ScanRequest {
  ScanBounds bounds;                           // views must outlive the scan
  // Every row's key starts with this ("" = no such condition). Narrows the scan where the LMDB key is the key's
  // bytes (the direct scheme without a length prefix: state maps); elsewhere the filter alone applies.
  std::string_view key_prefix;
  std::function<bool(const Row&)> filter;      // empty = every row
  uint64_t limit = 0;                          // 0 = no limit
  // A remote READ's cost cap, charged per row examined with the row's size; nullptr (local commands): none.
  ReadBudget* budget = nullptr;
};

// Calls `on_row` for each matching row (views valid during the call). Stops early when on_row returns false.
Status ScanMap(const MapEnv& env, const ScanRequest& request, const std::function<bool(const Row&)>& on_row,
               ScanStats* stats);

// The same scan in a transaction the caller holds (a deletion batch's write transaction): `cursor` is a cursor
// of env.data() in `txn`. `on_row` also gets the row's LMDB key and value (views valid during the call) and may
// delete the row the cursor is on as mdb_cursor_del does: the scan's MDB_NEXT then reaches the row after it.
using ScanRowCallback = std::function<bool(const Row&, Bytes lmdb_key, Bytes value)>;
Status ScanMapInTxn(const MapEnv& env, MDB_txn* txn, MDB_cursor* cursor, const ScanRequest& request,
                    const ScanRowCallback& on_row, ScanStats* stats);

}  // namespace planb
