// The base of every key scheme of plugins/schemes: its values go through a ValueTable (value_dedup, or stored as
// they are), and a merge places a batch's values in bulk (ValueMergePlan). Internal to plugins/schemes.
#pragma once

#include "planb/key_scheme.h"
#include "value_merge_plan.h"
#include "value_table.h"

namespace planb {
namespace value_dedup {

// The value methods, PlanValues and TablesInUse, once for every scheme. `own_tables`: how many tables every
// instance uses (declared first); the value tables follow them.
class SchemeWithValues : public KeyScheme {
 public:
  Code EncodeValue(const Table& table, Bytes value, uint8_t* scratch, Bytes* stored,
                   ErrorBuffer* error) const noexcept final {
    return values_.Encode(table, value, scratch, stored, error);
  }
  Code DecodeValue(const Table& table, Bytes stored, Bytes* value, ErrorBuffer* error) const noexcept final {
    return values_.Decode(table, stored, value, error);
  }
  Code ReleaseValue(const Table& table, Bytes stored, ErrorBuffer* error) const noexcept final {
    return values_.Release(table, stored, error);
  }
  uint32_t TablesInUse() const noexcept final { return own_tables_ + (values_.on() ? kValueTableCount : 0); }
  // Without value_dedup, DecodeValue hands back what it is given: lookups skip it.
  bool StoresValuesAsGiven() const noexcept final { return !values_.on(); }

  // Without value_dedup values are copied as they are: no plan.
  Code PlanValues(const Table& batch, const Table& shard, ValuePlan** plan, ErrorBuffer* error) const noexcept final {
    *plan = nullptr;
    if (!values_.on()) return Code::kOk;
    return ValueMergePlan::Make(batch, shard, values_.values_table(), plan, error);
  }

 protected:
  SchemeWithValues(uint32_t own_tables, bool value_dedup) : own_tables_(own_tables), values_(value_dedup, own_tables) {}
  ~SchemeWithValues() = default;
  bool value_dedup() const { return values_.on(); }

 private:
  const uint32_t own_tables_;
  const ValueTable values_;
};

}  // namespace value_dedup
}  // namespace planb
