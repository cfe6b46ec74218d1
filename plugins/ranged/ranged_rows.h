// Row-level code shared by the ranged store types: reading a record's range, writing and merging data rows,
// decoding them, and the key range of a KeyStart-bounded scan.
//
// Data rows (on-disk format; bump the plugins' kVersion if it changes):
//   LMDB key   = from + to (key_format.h: 8 bytes each, 16 for key_format ip)
//                [+ effective time (ordered i64) for temporal_ranged]
//   LMDB value = version + value type (1 byte) + value bytes, where the version is, for ranged, the record's
//                effective time (ordered i64) + XXH3-64 of the value (16 bytes) and, for temporal_ranged (whose
//                key holds the time), XXH3-64 of the value (8 bytes). Merges keep the row with the higher
//                version (memcmp), so their result does not depend on the order of the batches.
#pragma once

#include <cstdint>
#include <vector>

#include "planb/store.h"
#include "range_index.h"

namespace planb::ranged {

// The range of a <reference>: <from>/<to> (or <range>) or <key>N</key> meaning [N, N] (in the address formats
// also <key>a/n</key>, the CIDR block). Refuses, naming the text, a <session>, a missing value, both or neither
// of key and range, a non-numeric or out-of-range number, a malformed address, and from > to. `type_name`
// ("Ranged State") is for messages.
Code RecordRange(const Record& record, KeyFormat format, const char* type_name, Range* out, ErrorBuffer* error);

// The bound a lookup asks about: LookupKey::number for the number format, else the address text in
// LookupKey::key (kInvalidArgument naming a malformed one). Allocates nothing.
Code LookupBound(const LookupKey& lookup, KeyFormat format, Bound* out, ErrorBuffer* error);

// A signed 64-bit decimal (surrounding XML whitespace ignored). `element` names it in messages ("<from>").
Code ParseNumber(Bytes text, const char* element, int64_t* out, ErrorBuffer* error);

// The version of a data row: `time_ms` (when `version_size` is 16) and the value's hash, in `out`.
void MakeVersion(uint32_t version_size, int64_t time_ms, ValueType type, Bytes value, uint8_t* out);

// Writes the data row `key` -> `version` (`version_size` bytes) + value type + `value`, reserved in place
// (MDB_RESERVE). A row already there is replaced unless its version's first `keep_bytes` bytes compare above
// the new one's (a batch's own rows: the later record wins unless it is older).
Code WriteDataRow(const Table& table, Bytes key, const uint8_t* version, uint32_t version_size, uint32_t keep_bytes,
                  ValueType type, Bytes value, ErrorBuffer* error);

// Copies every data row of `batch` (keys of `key_size` bytes, versions of `version_size` bytes) into `shard`,
// where a row of an equal key is replaced only by one of a higher version, and adds each row's range to the
// shard's index (the batch's index is never copied: groups are local to each file).
Code MergeRows(const Table& batch, const Table& shard, uint32_t key_size, uint32_t width, uint32_t version_size,
               MergeStats* stats, ErrorBuffer* error);
// The same, adding each range to `index` (the shard's, opened by the caller) instead of a RangeIndexWriter.
Code MergeRows(const Table& batch, const Table& shard, uint32_t key_size, uint32_t width, uint32_t version_size,
               RangeAdder* index, MergeStats* stats, ErrorBuffer* error);

// Splits a data row: key of `key_size` bytes, value type and value. `type_name` is for messages. The address
// formats fill Row::address_from / address_to (7.2) when the host's Row has them, and range_from / range_to
// with the number for ipv4 and 0 for ip.
Code DecodeDataRow(Bytes lmdb_key, Bytes value, uint32_t key_size, uint32_t version_size, KeyFormat format,
                   const char* type_name, Row* row, ErrorBuffer* error);

// KeyStart bounds narrow the scan to rows whose from is in [number_min, number_max] (number format) or
// [address_min, address_max] (address formats); nothing else can (time is not a leading key part), so other
// bounds are left to the host's filter.
Code KeyStartScanRange(const ScanBounds& bounds, KeyFormat format, uint32_t key_size, KeyRange* range);

// ---- Maintenance: both index kinds are a function of the set of ranges, so after rows go the index is rebuilt
// from the data table rather than patched (removing a range from either kind means re-deciding every group it
// touched). A rebuild reads every data row once and writes the index anew: O(rows + index size).

// The distinct ranges of `table`'s data rows (keys of `key_size` bytes starting with from + to), in key order.
// Reads with a cursor of its own; `table.cursor` is not moved.
Code CollectRanges(const Table& table, uint32_t key_size, uint32_t width, std::vector<Range>* out, ErrorBuffer* error);

// Whether the index in store_tables[0] is the one of `ranges` (sorted, distinct) as far as deletions can spoil it:
// a group at exactly each distinct from, and every range it names one of `ranges`. Index values are lists of
// `entry_size`-byte entries naming a range (from + to) at `range_offset`. Reads only.
Code IndexNamesOnly(const Table& table, const std::vector<Range>& ranges, uint32_t width, uint32_t entry_size,
                    uint32_t range_offset, bool* fits, ErrorBuffer* error);

// Empties the index table (store_tables[0]); the caller then opens its index writer and adds every range.
Code DropIndex(const Table& table, ErrorBuffer* error);

}  // namespace planb::ranged
