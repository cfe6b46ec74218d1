// GuardedScheme::PlanMerge and PlanValues against the SDK minor a scheme was built with: a scheme of 7.2 or before
// has no PlanMerge in its vtable (7.3 none of PlanValues), so the host answers "no plan" without calling it; from
// the minor that added the call it is made, and the plan comes back behind a guard that forwards its calls and
// frees the scheme's plan through its Destroy. A value plan destroyed after placing values but before Finish is
// noted, and GuardedStore fails the merge that left it so.
#include "host/plugin_host/guarded_scheme.h"

#include <gtest/gtest.h>

#include <memory>

#include "host/plugin_host/guarded_store.h"
#include "support/stub_scheme.h"

namespace planb {
namespace {

// A scheme whose only working call is PlanMerge: it counts the calls and hands out a plan that records its use.
class PlanningScheme final : public testing::StubScheme {
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

  // A value plan that shifts every byte of a stored value by one and counts what it is asked.
  struct Values final : public ValuePlan {
    explicit Values(PlanningScheme* owner) : owner(owner) {}
    Code PlaceValue(Bytes batch_stored, uint8_t* scratch, Bytes* shard_stored, ErrorBuffer*) override {
      ++owner->values_placed;
      for (size_t i = 0; i < batch_stored.size; ++i) scratch[i] = static_cast<uint8_t>(batch_stored.data[i] + 1);
      *shard_stored = Bytes(scratch, batch_stored.size);
      return Code::kOk;
    }
    Code ReleaseValue(Bytes, ErrorBuffer*) override {
      ++owner->values_released;
      return Code::kOk;
    }
    Code Finish(ErrorBuffer* error) override { return Fail(error, Code::kFull, "finished %d", ++owner->finishes); }
    void Destroy() override {
      ++owner->plans_destroyed;
      delete this;
    }
    PlanningScheme* owner;
  };

  Code PlanValues(const Table&, const Table&, ValuePlan** plan, ErrorBuffer*) const override {
    auto* self = const_cast<PlanningScheme*>(this);
    ++self->plans_made;
    *plan = new Values(self);
    return Code::kOk;
  }

  Bytes Layout() const override { return Bytes("planning"); }

  int plans_made = 0;
  int rows_placed = 0;
  int values_placed = 0;
  int values_released = 0;
  int finishes = 0;
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

TEST(GuardedSchemePlanValues, AScheme73IsNeverAskedForAValuePlan) {
  PlanningScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'planning'", 3, &guarded).ok());
  ValuePlan* plan = reinterpret_cast<ValuePlan*>(&inner);  // must be overwritten with null
  ErrorBuffer error;
  EXPECT_EQ(guarded->PlanValues(Table(), Table(), &plan, &error), Code::kOk);
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(inner.plans_made, 0);
}

TEST(GuardedSchemePlanValues, AScheme74ValuePlanIsForwardedAndFreedThroughTheScheme) {
  PlanningScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'planning'", 4, &guarded).ok());
  ValuePlan* plan = nullptr;
  ErrorBuffer error;
  ASSERT_EQ(guarded->PlanValues(Table(), Table(), &plan, &error), Code::kOk);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(inner.plans_made, 1);
  uint8_t scratch[kMaxValueRefSize];
  Bytes stored;
  ASSERT_EQ(plan->PlaceValue(Bytes("abc"), scratch, &stored, &error), Code::kOk);
  EXPECT_EQ(stored.view(), "bcd");
  EXPECT_EQ(plan->ReleaseValue(stored, &error), Code::kOk);
  EXPECT_EQ(plan->Finish(&error), Code::kFull);  // the plan's own answer and message come through, attributed
  EXPECT_STREQ(error.message, "scheme 'planning': ValuePlan::Finish: finished 1");
  EXPECT_EQ(inner.values_placed, 1);
  EXPECT_EQ(inner.values_released, 1);
  plan->Destroy();
  EXPECT_EQ(inner.plans_destroyed, 1);
}

TEST(GuardedSchemePlanValues, APlanDestroyedAfterPlacingButBeforeFinishIsNotedOnce) {
  PlanningScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'planning'", 4, &guarded).ok());
  ErrorBuffer error;
  uint8_t scratch[kMaxValueRefSize];
  Bytes stored;
  const auto plan_and = [&](bool place, bool finish) {
    ValuePlan* plan = nullptr;
    ASSERT_EQ(guarded->PlanValues(Table(), Table(), &plan, &error), Code::kOk);
    if (place) {
      ASSERT_EQ(plan->PlaceValue(Bytes("abc"), scratch, &stored, &error), Code::kOk);
    }
    if (finish) (void)plan->Finish(&error);  // PlanningScheme's Finish fails: still unfinished
    plan->Destroy();
  };
  (void)guarded->TakeUnfinishedPlan();  // the note is per thread: one an earlier test left is not this one's
  plan_and(false, false);               // nothing placed: nothing owed
  EXPECT_FALSE(guarded->TakeUnfinishedPlan());
  plan_and(true, true);
  EXPECT_TRUE(guarded->TakeUnfinishedPlan());
  EXPECT_FALSE(guarded->TakeUnfinishedPlan());  // taken
}

// A store type whose Merge places one value through the scheme's value plan and, unless `finish`, returns kOk
// without finishing it.
class ForgetfulStore final : public Store {
 public:
  ForgetfulStore(const KeyScheme* scheme, bool fail) : scheme_(scheme), fail_(fail) {}
  Code Merge(const Table& batch, const Table& shard, MergeStats*, ErrorBuffer* error) override {
    ValuePlan* plan = nullptr;
    Code code = scheme_->PlanValues(batch, shard, &plan, error);
    if (code != Code::kOk || plan == nullptr) return Code::kInternal;
    uint8_t scratch[kMaxValueRefSize];
    Bytes stored;
    code = plan->PlaceValue(Bytes("abc"), scratch, &stored, error);
    plan->Destroy();
    if (fail_) return Fail(error, Code::kIOError, "the store's own failure");
    return code;
  }
  Code Put(const Table&, const Record&, ErrorBuffer*) override { return Code::kInternal; }
  Code Get(const Table&, const LookupKey&, Row*, ErrorBuffer*) const override { return Code::kInternal; }
  Code DecodeRow(const Table&, Bytes, Bytes, Row*, ErrorBuffer*) const override { return Code::kInternal; }
  Code Maintain(const Table&, const MaintainRequest&, MaintainStats*, ErrorBuffer*) override { return Code::kInternal; }
  Code DeleteRow(const Table&, Bytes, Bytes, ErrorBuffer*) override { return Code::kInternal; }
  Code FinishDeletes(const Table&, ErrorBuffer*) override { return Code::kInternal; }
  Code ScanRange(const Table&, const ScanBounds&, KeyRange*, ErrorBuffer*) const override { return Code::kInternal; }

 private:
  const KeyScheme* scheme_;
  const bool fail_;
};

TEST(GuardedStoreMerge, AMergeThatLeavesItsValuePlanUnfinishedFailsNamingTheStoreType) {
  PlanningScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'planning'", 4, &guarded).ok());
  ForgetfulStore forgetful(guarded.get(), false);
  GuardedStore store(&forgetful, "store type 'forgetful'", guarded.get());
  ErrorBuffer error;
  MergeStats stats;
  EXPECT_EQ(store.Merge(Table(), Table(), &stats, &error), Code::kInternal);
  EXPECT_STREQ(error.message,
               "store type 'forgetful': Store::Merge placed values through a value plan and never finished it "
               "(KeyedRowWriter::FinishMerge); the merge is rolled back");

  // A merge that fails on its own keeps its error (its transaction is rolled back anyway), and the note is gone.
  ForgetfulStore failing(guarded.get(), true);
  GuardedStore failing_store(&failing, "store type 'failing'", guarded.get());
  EXPECT_EQ(failing_store.Merge(Table(), Table(), &stats, &error), Code::kIOError);
  EXPECT_STREQ(error.message, "store type 'failing': Store::Merge: the store's own failure");
  EXPECT_FALSE(guarded->TakeUnfinishedPlan());
}

}  // namespace
}  // namespace planb
