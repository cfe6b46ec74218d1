// GuardedScheme::PlanMerge against the SDK minor a scheme was built with: a scheme of 7.2 or before has no
// PlanMerge in its vtable, so the host answers "no plan" without calling it; from 7.3 the call is made and the
// plan comes back behind a guard that forwards PlaceRow and frees the scheme's plan through its Destroy.
#include "host/plugin_host/guarded_scheme.h"

#include <gtest/gtest.h>

#include <memory>

namespace planb {
namespace {

// A scheme whose only working call is PlanMerge: it counts the calls and hands out a plan that records its use.
class PlanningScheme final : public KeyScheme {
 public:
  struct Plan final : public MergePlan {
    explicit Plan(PlanningScheme* owner) : owner(owner) {}
    Code PlaceRow(Bytes lmdb_key, Bytes value, PlacedRow* out, ErrorBuffer*) override {
      ++owner->rows_placed;
      out->key = value;
      out->prefix_size = static_cast<uint32_t>(lmdb_key.size);
      out->shard_prefix.size = static_cast<uint32_t>(lmdb_key.size);
      for (size_t i = 0; i < lmdb_key.size; ++i) {
        out->shard_prefix.bytes[i] = static_cast<uint8_t>(lmdb_key.data[i] + 1);
      }
      return Code::kOk;
    }
    void Destroy() override {
      ++owner->plans_destroyed;
      delete this;
    }
    PlanningScheme* owner;
  };

  Code PlanMerge(const Table&, const Table&, MergePlan** plan, ErrorBuffer*) const override {
    auto* self = const_cast<PlanningScheme*>(this);
    ++self->plans_made;
    *plan = new Plan(self);
    return Code::kOk;
  }

  Code FirstCandidate(const Table&, Bytes, Intent, Candidate*, ErrorBuffer*) const override { return Code::kInternal; }
  bool RowHasKey(Bytes, Bytes) const override { return false; }
  Code NextCandidate(const Table&, Bytes, Bytes, KeyPrefix*, ErrorBuffer*) const override { return Code::kInternal; }
  Code NewPrefix(const Table&, Bytes, bool, KeyPrefix*, ErrorBuffer*) const override { return Code::kInternal; }
  uint32_t StoredKeySize(const KeyPrefix&, Bytes) const override { return 0; }
  void WriteStoredKey(const KeyPrefix&, Bytes, uint8_t*) const override {}
  Code DecodeRow(const Table&, Bytes, Bytes, Bytes*, uint32_t*, uint32_t*, ErrorBuffer*) const override {
    return Code::kInternal;
  }
  Code EncodeValue(const Table&, Bytes, uint8_t*, Bytes*, ErrorBuffer*) const override { return Code::kInternal; }
  Code DecodeValue(const Table&, Bytes, Bytes*, ErrorBuffer*) const override { return Code::kInternal; }
  Code ReleaseValue(const Table&, Bytes, ErrorBuffer*) const override { return Code::kInternal; }
  Code SweepUnusedKeys(const Table&, uint32_t, uint64_t*, ErrorBuffer*) const override { return Code::kInternal; }
  Bytes Layout() const override { return Bytes("planning"); }
  uint32_t TablesInUse() const override { return 0; }

  int plans_made = 0;
  int rows_placed = 0;
  int plans_destroyed = 0;
};

TEST(GuardedSchemePlanMerge, AScheme72IsNeverAskedForAPlan) {
  PlanningScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'planning'", 2, &guarded).ok());
  MergePlan* plan = reinterpret_cast<MergePlan*>(&inner);  // must be overwritten with null
  ErrorBuffer error;
  EXPECT_EQ(guarded->PlanMerge(Table(), Table(), &plan, &error), Code::kOk);
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(inner.plans_made, 0);
}

TEST(GuardedSchemePlanMerge, AScheme73PlanIsForwardedAndFreedThroughTheScheme) {
  PlanningScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'planning'", 3, &guarded).ok());
  MergePlan* plan = nullptr;
  ErrorBuffer error;
  ASSERT_EQ(guarded->PlanMerge(Table(), Table(), &plan, &error), Code::kOk);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(inner.plans_made, 1);
  const uint8_t batch_key[] = {1, 2, 3};
  PlacedRow out;
  ASSERT_EQ(plan->PlaceRow(Bytes(batch_key, 3), Bytes("key"), &out, &error), Code::kOk);
  EXPECT_EQ(inner.rows_placed, 1);
  EXPECT_EQ(out.key.view(), "key");
  EXPECT_EQ(out.prefix_size, 3u);
  ASSERT_EQ(out.shard_prefix.size, 3u);
  EXPECT_EQ(out.shard_prefix.bytes[0], 2);
  EXPECT_EQ(out.shard_prefix.bytes[2], 4);
  plan->Destroy();
  EXPECT_EQ(inner.plans_destroyed, 1);
}

}  // namespace
}  // namespace planb
