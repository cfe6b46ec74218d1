// GuardedScheme's lookup calls of SDK 7.5 against the minor a scheme was built with: before 7.5 the vtable has
// neither MatchStoredKey nor StoresValuesAsGiven, so the host makes RowHasKey and StoredKeySize itself and answers
// "values not as given" without asking; from 7.5 both are the scheme's, the second asked once, at Create.
// From 7.6 the host asks a scheme its LookupForm once and hands it on only when the scheme writes that form.
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "host/plugin_host/guarded_scheme.h"
#include "planb/key_form.h"
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

// SDK 7.7: a scheme that writes the hybrid form of `written` and claims `claimed`.
class HybridFormScheme final : public testing::StubScheme {
 public:
  HybridFormScheme(KeyForm written, KeyForm claimed) : written_(written), claimed_(claimed) {}
  Code FirstCandidate(const Table&, Bytes key, Intent, Candidate* out, ErrorBuffer*) const override {
    return key_form::FirstCandidate(written_, key, out);
  }
  uint32_t StoredKeySize(const KeyPrefix& prefix, Bytes key) const override {
    return prefix.bytes[0] == key_form::kHybridHashedTag ? key_form::HashedStoredKeySize(key) : 0;
  }
  void WriteStoredKey(const KeyPrefix& prefix, Bytes key, uint8_t* out) const override {
    if (prefix.bytes[0] == key_form::kHybridHashedTag) key_form::WriteHashedStoredKey(key, out);
  }
  KeyForm LookupForm() const override { return claimed_; }

 private:
  const KeyForm written_;
  const KeyForm claimed_;
};

KeyForm Hybrid(uint32_t max_key, uint32_t length_prefixed = 0, uint32_t bits = 64) {
  KeyForm form;
  form.kind = KeyFormKind::kHybrid;
  form.hash_bits = bits;
  form.max_key = max_key;
  form.length_prefixed = length_prefixed;
  return form;
}

TEST(GuardedSchemeLookups, AHybridFormIsHandedOnOnlyWhenItsBoundIsTheSchemes) {
  for (const KeyForm& form : {Hybrid(32), Hybrid(0), Hybrid(510), Hybrid(100, 1, 16)}) {
    HybridFormScheme inner(form, form);
    const KeyForm handed = FormThroughTheGuard(inner, 7);
    EXPECT_EQ(handed.kind, KeyFormKind::kHybrid) << form.max_key;
    EXPECT_EQ(handed.max_key, form.max_key);
  }
  // One byte off either way, another length form or other bits: the keys at the bound tell.
  const std::pair<KeyForm, KeyForm> lies[] = {{Hybrid(32), Hybrid(33)}, {Hybrid(32), Hybrid(31)},
                                              {Hybrid(32), Hybrid(32, 1)}, {Hybrid(32, 0, 32), Hybrid(32)},
                                              {Hybrid(0), Hybrid(1)}};
  for (const auto& [written, claimed] : lies) {
    HybridFormScheme inner(written, claimed);
    EXPECT_EQ(FormThroughTheGuard(inner, 7).kind, KeyFormKind::kCallScheme)
        << "writes " << written.max_key << ", claims " << claimed.max_key;
  }
  HybridFormScheme too_long(Hybrid(32), Hybrid(511));  // past LMDB's limit with its tag
  EXPECT_EQ(FormThroughTheGuard(too_long, 7).kind, KeyFormKind::kCallScheme);
}

}  // namespace
}  // namespace planb
