// GuardedScheme's lookup calls of SDK 7.5 against the minor a scheme was built with: before 7.5 the vtable has
// neither MatchStoredKey nor StoresValuesAsGiven, so the host makes RowHasKey and StoredKeySize itself and answers
// "values not as given" without asking; from 7.5 both are the scheme's, the second asked once, at Create.
// From 7.6 the host asks a scheme its LookupForm once and hands it on only when the scheme writes that form.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "host/plugin_host/guarded_scheme.h"
#include "planb/key_form.h"
#include "support/stub_scheme.h"
#include "support/tagged_form_kinds.h"

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

// SDK 7.6: a scheme's LookupForm is handed on only when the scheme writes what the form says. This scheme writes
// the hashed form of `bits` bits (and its stored key) with planb/key_form.h, and claims `claimed`.
class FormScheme final : public testing::StubScheme {
 public:
  FormScheme(uint32_t bits, KeyForm claimed) : bits_(bits), claimed_(claimed) {}
  Code FirstCandidate(const Table&, Bytes key, Intent, Candidate* out, ErrorBuffer*) const override {
    out->prefix.size = key_form::WriteHashedFirst(bits_, key, out->prefix.bytes);
    out->certain = certain_;
    return Code::kOk;
  }
  uint32_t StoredKeySize(const KeyPrefix&, Bytes key) const override {
    return key_form::HashedStoredKeySize(key) + extra_stored_byte_;
  }
  void WriteStoredKey(const KeyPrefix&, Bytes key, uint8_t* out) const override {
    key_form::WriteHashedStoredKey(key, out);
  }
  KeyForm LookupForm() const override {
    ++form_calls;
    return claimed_;
  }

  bool certain_ = false;
  uint32_t extra_stored_byte_ = 0;
  mutable int form_calls = 0;

 private:
  const uint32_t bits_;
  const KeyForm claimed_;
};

KeyForm Hashed(uint32_t bits) {
  KeyForm form;
  form.kind = KeyFormKind::kHashed;
  form.hash_bits = bits;
  return form;
}

KeyForm FormThroughTheGuard(const KeyScheme& inner, uint32_t abi_minor) {
  std::unique_ptr<GuardedScheme> guarded;
  const Status s = GuardedScheme::Create(&inner, "scheme 'form'", abi_minor, &guarded);
  EXPECT_TRUE(s.ok()) << s.message();
  return guarded ? guarded->LookupForm() : KeyForm();
}

TEST(GuardedSchemeLookups, AFormTheSchemeWritesIsHandedOnAndAsked7_6Only) {
  FormScheme inner(32, Hashed(32));
  KeyForm form = FormThroughTheGuard(inner, 6);
  EXPECT_EQ(form.kind, KeyFormKind::kHashed);
  EXPECT_EQ(form.hash_bits, 32u);
  EXPECT_EQ(inner.form_calls, 1);

  form = FormThroughTheGuard(inner, 5);  // no LookupForm in a 7.5 vtable: never called
  EXPECT_EQ(form.kind, KeyFormKind::kCallScheme);
  EXPECT_EQ(inner.form_calls, 1);
}

TEST(GuardedSchemeLookups, AFormTheSchemeDoesNotWriteIsNotHandedOn) {
  FormScheme other_bits(32, Hashed(64));  // claims 64 bits, writes 32
  EXPECT_EQ(FormThroughTheGuard(other_bits, 6).kind, KeyFormKind::kCallScheme);

  FormScheme certain(64, Hashed(64));  // its candidates are certain: the hashed form's are not
  certain.certain_ = true;
  EXPECT_EQ(FormThroughTheGuard(certain, 6).kind, KeyFormKind::kCallScheme);

  FormScheme longer_stored_key(64, Hashed(64));
  longer_stored_key.extra_stored_byte_ = 1;
  EXPECT_EQ(FormThroughTheGuard(longer_stored_key, 6).kind, KeyFormKind::kCallScheme);

  KeyForm direct;  // a hashed scheme claiming the direct form
  direct.kind = KeyFormKind::kDirect;
  direct.max_key = 511;
  FormScheme claims_direct(64, direct);
  EXPECT_EQ(FormThroughTheGuard(claims_direct, 6).kind, KeyFormKind::kCallScheme);
}

TEST(GuardedSchemeLookups, AMalformedFormIsNotHandedOn) {
  KeyForm unknown;
  unknown.kind = static_cast<KeyFormKind>(7);
  KeyForm direct_too_long;
  direct_too_long.kind = KeyFormKind::kDirect;
  direct_too_long.max_key = 510;
  direct_too_long.length_prefixed = 1;  // 2 + 510 bytes: past LMDB's 511
  KeyForm direct_empty = direct_too_long;
  direct_empty.max_key = 0;
  direct_empty.length_prefixed = 0;
  KeyForm direct_flag = direct_empty;
  direct_flag.max_key = 100;
  direct_flag.length_prefixed = 2;
  for (const KeyForm& claimed : {unknown, Hashed(7), Hashed(65), Hashed(0), direct_too_long, direct_empty,
                                 direct_flag}) {
    EXPECT_FALSE(key_form::Valid(claimed));
    FormScheme inner(64, claimed);
    EXPECT_EQ(FormThroughTheGuard(inner, 6).kind, KeyFormKind::kCallScheme);
    EXPECT_EQ(inner.form_calls, 1);
  }
}

// SDK 7.7: a scheme that writes the tagged form (kHybrid, kVariable) `written` and claims `claimed`. Keys of
// kVariable's id form are never asked of it here: the guard skips what the claimed form leaves to the scheme.
class TaggedFormScheme final : public testing::StubScheme {
 public:
  TaggedFormScheme(KeyForm written, KeyForm claimed) : written_(written), claimed_(claimed) {}
  Code FirstCandidate(const Table&, Bytes key, Intent, Candidate* out, ErrorBuffer*) const override {
    return key_form::FirstCandidate(written_, key, out);
  }
  uint32_t StoredKeySize(const KeyPrefix& prefix, Bytes key) const override {
    return prefix.bytes[0] == HashedTag() ? key_form::HashedStoredKeySize(key) : 0;
  }
  void WriteStoredKey(const KeyPrefix& prefix, Bytes key, uint8_t* out) const override {
    if (prefix.bytes[0] == HashedTag()) key_form::WriteHashedStoredKey(key, out);
  }
  KeyForm LookupForm() const override { return claimed_; }

 private:
  uint8_t HashedTag() const {
    return written_.kind == KeyFormKind::kHybrid ? key_form::kHybridHashedTag : key_form::kVariableHashedTag;
  }

  const KeyForm written_;
  const KeyForm claimed_;
};

KeyForm Tagged(KeyFormKind kind, uint32_t max_key, uint32_t length_prefixed = 0, uint32_t bits = 64) {
  KeyForm form;
  form.kind = kind;
  form.hash_bits = bits;
  form.max_key = max_key;
  form.length_prefixed = length_prefixed;
  return form;
}

class GuardedTaggedForms : public ::testing::TestWithParam<KeyFormKind> {
 protected:
  KeyForm Form(uint32_t max_key, uint32_t length_prefixed = 0, uint32_t bits = 64) const {
    return Tagged(GetParam(), max_key, length_prefixed, bits);
  }
};

TEST_P(GuardedTaggedForms, AFormIsHandedOnOnlyWhenItsBoundIsTheSchemes) {
  for (const KeyForm& form : {Form(32), Form(0), Form(510), Form(100, 1, 16)}) {
    TaggedFormScheme inner(form, form);
    const KeyForm handed = FormThroughTheGuard(inner, 7);
    EXPECT_EQ(handed.kind, GetParam()) << form.max_key;
    EXPECT_EQ(handed.max_key, form.max_key);
  }
  // One byte more than the scheme's direct keys, another length form or other bits: the keys at the bound (or
  // the long ones) tell.
  const std::pair<KeyForm, KeyForm> lies[] = {
      {Form(32), Form(33)}, {Form(32), Form(32, 1)}, {Form(32, 0, 32), Form(32)}, {Form(0), Form(1)}};
  for (const auto& [written, claimed] : lies) {
    TaggedFormScheme inner(written, claimed);
    EXPECT_EQ(FormThroughTheGuard(inner, 7).kind, KeyFormKind::kCallScheme)
        << "writes " << written.max_key << ", claims " << claimed.max_key;
  }
  TaggedFormScheme too_long(Form(32), Form(511));  // past LMDB's limit with its tag
  EXPECT_EQ(FormThroughTheGuard(too_long, 7).kind, KeyFormKind::kCallScheme);
  TaggedFormScheme other_kind(Form(32), Tagged(GetParam() == KeyFormKind::kHybrid ? KeyFormKind::kVariable
                                                                                   : KeyFormKind::kHybrid,
                                               32));  // another tag for the hashed keys
  EXPECT_EQ(FormThroughTheGuard(other_kind, 7).kind, KeyFormKind::kCallScheme);
}

// A hybrid scheme claiming one byte fewer direct keys: its key at the claimed bound + 1 is direct, not hashed.
// (A variable scheme claiming fewer leaves those keys to itself, which is as right: no check can fail.)
TEST(GuardedSchemeLookups, AHybridFormClaimingFewerDirectKeysIsNotHandedOn) {
  TaggedFormScheme inner(Tagged(KeyFormKind::kHybrid, 32), Tagged(KeyFormKind::kHybrid, 31));
  EXPECT_EQ(FormThroughTheGuard(inner, 7).kind, KeyFormKind::kCallScheme);
}

INSTANTIATE_TEST_SUITE_P(Kinds, GuardedTaggedForms, TaggedFormKinds(), TaggedFormKindName);

}  // namespace
}  // namespace planb
