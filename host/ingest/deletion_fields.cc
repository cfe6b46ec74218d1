#include "host/ingest/deletion_fields.h"

#include <xxhash.h>

#include <memory>

#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "planb/encoding.h"

namespace planb {

namespace {
bool IsIdentity(RowField field) {
  return field == RowField::kKey || field == RowField::kKeyStart || field == RowField::kKeyEnd ||
         field == RowField::kEffectiveTime || field == RowField::kStart || field == RowField::kEnd;
}

void PutNumber(int64_t n, std::string* out) {
  uint8_t bytes[8];
  PutU64(bytes, static_cast<uint64_t>(n));
  out->append(reinterpret_cast<const char*>(bytes), 8);
}
}  // namespace

std::vector<FieldSpec> IdentityFields(const PluginDescriptor& type, const MapConfig& config) {
  std::vector<FieldSpec> identity;
  for (const FieldSpec& f : MapFields(type, config)) {
    if (IsIdentity(f.field)) identity.push_back(f);
  }
  return identity;
}

bool NamesIdentityOnly(const DeleteEntry& entry, const PluginDescriptor& type, const MapConfig& config) {
  if (entry.all) return true;
  const std::vector<FieldSpec> identity = IdentityFields(type, config);
  std::unique_ptr<Expression> parsed;
  return Expression::Parse(entry.where, identity.data(), static_cast<uint32_t>(identity.size()), &parsed).ok();
}

Status CheckDeletionExpression(const DeleteEntry& entry, const PluginDescriptor& type, const MapConfig& config) {
  if (entry.all) return Status::Ok();
  const std::vector<FieldSpec> fields = MapFields(type, config);
  std::unique_ptr<Expression> parsed;
  PLANB_RETURN_IF_ERROR(Expression::Parse(entry.where, fields.data(), static_cast<uint32_t>(fields.size()), &parsed));
  std::vector<FieldSpec> without_own;
  std::string own;
  for (const FieldSpec& f : fields) {
    if (f.field != RowField::kOwn) {
      without_own.push_back(f);
    } else {
      own += (own.empty() ? "" : ", ") + std::string(f.name);
    }
  }
  if (own.empty() ||
      Expression::Parse(entry.where, without_own.data(), static_cast<uint32_t>(without_own.size()), &parsed).ok()) {
    return Status::Ok();
  }
  return Status::Invalid("--where: a deletion cannot name " + own + " of a " + type.name +
                         " map: they add up across batches, so which rows match would depend on the order batches "
                         "reach each node; delete by the key and time fields (docs/storage-nodes.md, 'Order')");
}

std::string RowIdentity(const std::vector<FieldSpec>& identity_fields, const Row& row) {
  std::string out;
  for (const FieldSpec& f : identity_fields) {
    switch (f.field) {
      case RowField::kKey: {
        uint8_t size[4];
        PutU32(size, static_cast<uint32_t>(row.key.size));
        out.append(reinterpret_cast<const char*>(size), 4);
        out.append(reinterpret_cast<const char*>(row.key.data), row.key.size);
        break;
      }
      case RowField::kKeyStart:
        if (f.kind == FieldKind::kAddress) {
          out.append(reinterpret_cast<const char*>(row.address_from), 16);
        } else {
          PutNumber(row.range_from, &out);
        }
        break;
      case RowField::kKeyEnd:
        if (f.kind == FieldKind::kAddress) {
          out.append(reinterpret_cast<const char*>(row.address_to), 16);
        } else {
          PutNumber(row.range_to, &out);
        }
        break;
      case RowField::kEffectiveTime: PutNumber(row.effective_time_ms, &out); break;
      case RowField::kStart: PutNumber(row.session_start_ms, &out); break;
      case RowField::kEnd: PutNumber(row.session_end_ms, &out); break;
      default: break;
    }
  }
  return out;
}

uint64_t RowTieHash(const Row& row) {
  return XXH3_64bits_withSeed(row.value.data, row.value.size, static_cast<uint8_t>(row.value_type));
}

}  // namespace planb
