// What a deletion's expression may name, and what a row's identity is, so that deletions commute with loads.
// A row's identity is what its type's fields bound to the key, the range bounds and the row's own time (temporal
// rows, buckets, sessions) say; State and Ranged rows keep one value per identity (the latest wins), and their
// EffectiveTime is the value's version, not part of the identity, so it is not among their fields.
//   - An expression on identity fields only (or `all`) matches every version of a row alike: its tombstone alone
//     makes it order-free.
//   - An expression on a value (Value, ValueType) may match a row's newer value and not an older one: each row it
//     takes leaves an identity tombstone too (tombstones.h, "shadowed"), so the older value cannot come back.
//   - An expression on a type's own fields (Count, Sum, ...) is refused: those add up across batches, so which
//     rows match would depend on the batches merged so far.
// Thread-safety: plain functions.
#pragma once

#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/transfer/delete_entry.h"
#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

// The map's fields (MapFields) that identify a row.
std::vector<FieldSpec> IdentityFields(const PluginDescriptor& type, const MapConfig& config);

// Whether `entry` is `all` or names identity fields only. REQUIRES: the expression parses for the map.
bool NamesIdentityOnly(const DeleteEntry& entry, const PluginDescriptor& type, const MapConfig& config);

// Parses `entry`'s expression for the map and refuses one that names a field of the type's own:
// kInvalidArgument naming the field's kind and the remedy. OK for `all`.
Status CheckDeletionExpression(const DeleteEntry& entry, const PluginDescriptor& type, const MapConfig& config);

// The identity of `row` as bytes (a key for the "shadowed" table): each of `identity_fields`' values
// (IdentityFields, computed once by the caller), text with a 4-byte length, numbers and dates as 8 bytes,
// addresses as 16, in field order.
std::string RowIdentity(const std::vector<FieldSpec>& identity_fields, const Row& row);

// The tie-break of two values of one identity at the same time, as every built-in type with a value breaks it
// (docs/plugins.md, "Merges must commute"): XXH3-64 of the value seeded with the value type's byte; the higher
// wins.
uint64_t RowTieHash(const Row& row);

}  // namespace planb
