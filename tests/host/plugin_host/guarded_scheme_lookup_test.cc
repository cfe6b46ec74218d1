// GuardedScheme's lookup calls of SDK 7.5 against the minor a scheme was built with: before 7.5 the vtable has
// neither MatchStoredKey nor StoresValuesAsGiven, so the host makes RowHasKey and StoredKeySize itself and answers
// "values not as given" without asking; from 7.5 both are the scheme's, the second asked once, at Create.
#include <gtest/gtest.h>

#include <memory>

#include "host/plugin_host/guarded_scheme.h"
#include "support/stub_scheme.h"

namespace planb {
namespace {

// A row holds `key` when its value starts with it; the stored key is the key and one byte. Counts every call.
class MatchingScheme final : public testing::StubScheme {
 public:
  bool RowHasKey(Bytes key, Bytes value) const override {
    ++calls.row_has_key;
    return value.size >= key.size && Bytes(value.data, key.size) == key;
  }
  uint32_t StoredKeySize(const KeyPrefix&, Bytes key) const override {
    ++calls.stored_key_size;
    return static_cast<uint32_t>(key.size) + 1;
  }
  bool MatchStoredKey(const KeyPrefix&, Bytes key, Bytes value, uint32_t* stored_key_size) const override {
    ++calls.match_stored_key;
    if (value.size < key.size || Bytes(value.data, key.size) != key) return false;
    *stored_key_size = 99;  // not StoredKeySize's answer: tells which path answered
    return true;
  }
  bool StoresValuesAsGiven() const override {
    ++calls.values_as_given;
    return true;
  }

  Bytes Layout() const override { return Bytes("matching"); }

  struct Calls {
    int row_has_key = 0;
    int stored_key_size = 0;
    int match_stored_key = 0;
    int values_as_given = 0;
  };
  mutable Calls calls;
};

TEST(GuardedSchemeLookups, AScheme74IsAskedRowHasKeyAndStoredKeySizeAndNeverAboutItsValues) {
  MatchingScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'matching'", 4, &guarded).ok());
  EXPECT_FALSE(guarded->StoresValuesAsGiven());
  EXPECT_EQ(inner.calls.values_as_given, 0);

  uint32_t size = 0;
  EXPECT_TRUE(guarded->MatchStoredKey(KeyPrefix(), Bytes("key"), Bytes("key+value"), &size));
  EXPECT_EQ(size, 4u);  // StoredKeySize's answer
  EXPECT_FALSE(guarded->MatchStoredKey(KeyPrefix(), Bytes("kex"), Bytes("key+value"), &size));
  EXPECT_EQ(inner.calls.row_has_key, 2);
  EXPECT_EQ(inner.calls.stored_key_size, 1);  // only for the row that is the key's
  EXPECT_EQ(inner.calls.match_stored_key, 0);
  EXPECT_FALSE(guarded->failed());
}

TEST(GuardedSchemeLookups, AScheme75AnswersBothItselfAndIsAskedAboutItsValuesOnce) {
  MatchingScheme inner;
  std::unique_ptr<GuardedScheme> guarded;
  ASSERT_TRUE(GuardedScheme::Create(&inner, "scheme 'matching'", 5, &guarded).ok());
  EXPECT_TRUE(guarded->StoresValuesAsGiven());
  EXPECT_TRUE(guarded->StoresValuesAsGiven());
  EXPECT_EQ(inner.calls.values_as_given, 1);  // at Create

  uint32_t size = 0;
  EXPECT_TRUE(guarded->MatchStoredKey(KeyPrefix(), Bytes("key"), Bytes("key+value"), &size));
  EXPECT_EQ(size, 99u);
  EXPECT_FALSE(guarded->MatchStoredKey(KeyPrefix(), Bytes("kex"), Bytes("key+value"), &size));
  EXPECT_EQ(inner.calls.match_stored_key, 2);
  EXPECT_EQ(inner.calls.row_has_key, 0);
  EXPECT_EQ(inner.calls.stored_key_size, 0);
}

}  // namespace
}  // namespace planb
