// planb/key_form.h against the real `hashed`, `direct`, `hybrid` and `variable` scheme plugins: the forms they report (through the
// host, as a store type gets them) and, key by key, the same first candidates and stored keys as the schemes' own
// calls, since a lookup on a form makes no call into the scheme.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "planb/key_form.h"
#include "support/map_fixture.h"
#include "support/tagged_form_kinds.h"

namespace planb {
namespace {

using ::planb::testing::CreateMapPlugins;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::SchemeInstance;

// Keys of 0 to 700 bytes of any byte value, and some that sit on the forms' limits.
std::vector<std::string> SampleKeys() {
  std::mt19937 rng(5);
  std::vector<std::string> keys = {"", "a", std::string(127, 'k'), std::string(128, 'k'), std::string(491, 'd'),
                                   std::string(492, 'd'), std::string(501, 'd'), std::string(502, 'd'),
                                   std::string(511, 'd'), std::string(512, 'd'), std::string(16384, 'v')};
  for (int i = 0; i < 400; ++i) {
    std::string key(rng() % 701, '\0');
    for (char& c : key) c = static_cast<char>(rng());
    keys.push_back(std::move(key));
  }
  return keys;
}

KeyForm FormOfMap(const std::string& type, const std::string& scheme,
                  std::vector<std::pair<std::string, std::string>> options = {}) {
  std::shared_ptr<const MapPlugins> plugins;
  const Status s = CreateMapPlugins(MakeMapConfig("m", type, scheme, std::move(options)), &plugins);
  EXPECT_TRUE(s.ok()) << s.message();
  return plugins ? plugins->scheme()->LookupForm() : KeyForm();
}

TEST(KeyForm, HashedAndDirectReportTheirFormsThroughTheHost) {
  KeyForm form = FormOfMap("state", "hashed");
  EXPECT_EQ(form.kind, KeyFormKind::kHashed);
  EXPECT_EQ(form.hash_bits, 64u);
  form = FormOfMap("temporal", "hashed", {{"hash_bits", "21"}, {"value_dedup", "true"}});
  EXPECT_EQ(form.kind, KeyFormKind::kHashed);
  EXPECT_EQ(form.hash_bits, 21u);

  form = FormOfMap("state", "direct");
  EXPECT_EQ(form.kind, KeyFormKind::kDirect);
  EXPECT_EQ(form.max_key, 511u);
  EXPECT_EQ(form.length_prefixed, 0u);
  form = FormOfMap("temporal", "direct");  // 8-byte time + 2-byte length
  EXPECT_EQ(form.kind, KeyFormKind::kDirect);
  EXPECT_EQ(form.max_key, 501u);
  EXPECT_EQ(form.length_prefixed, 1u);
  form = FormOfMap("session", "direct");  // 16-byte bounds + 2-byte length
  EXPECT_EQ(form.max_key, 493u);
  EXPECT_EQ(form.length_prefixed, 1u);
}

TEST(KeyForm, HybridReportsItsFormThroughTheHost) {
  KeyForm form = FormOfMap("state", "hybrid");
  EXPECT_EQ(form.kind, KeyFormKind::kHybrid);
  EXPECT_EQ(form.hash_bits, 64u);
  EXPECT_EQ(form.max_key, 510u);  // a tag byte, then the key
  EXPECT_EQ(form.length_prefixed, 0u);
  form = FormOfMap("session", "hybrid", {{"direct_max", "40"}, {"hash_bits", "32"}, {"value_dedup", "true"}});
  EXPECT_EQ(form.kind, KeyFormKind::kHybrid);
  EXPECT_EQ(form.hash_bits, 32u);
  EXPECT_EQ(form.max_key, 40u);
  EXPECT_EQ(form.length_prefixed, 1u);
  form = FormOfMap("temporal", "hybrid", {{"direct_max", "0"}});  // the empty key direct, every other hashed
  EXPECT_EQ(form.kind, KeyFormKind::kHybrid);
  EXPECT_EQ(form.max_key, 0u);
}

TEST(KeyForm, VariableReportsItsFormThroughTheHost) {
  KeyForm form = FormOfMap("state", "variable");
  EXPECT_EQ(form.kind, KeyFormKind::kVariable);
  EXPECT_EQ(form.hash_bits, 64u);
  EXPECT_EQ(form.max_key, 32u);  // the default direct_max
  EXPECT_EQ(form.length_prefixed, 0u);
  form = FormOfMap("temporal", "variable", {{"direct_max", "500"}, {"hash_bits", "16"}, {"value_dedup", "true"}});
  EXPECT_EQ(form.kind, KeyFormKind::kVariable);
  EXPECT_EQ(form.hash_bits, 16u);
  EXPECT_EQ(form.max_key, 500u);
  EXPECT_EQ(form.length_prefixed, 1u);
}

TEST(KeyForm, VariableLeavesItsIdFormToTheScheme) {
  KeyForm form;
  form.kind = KeyFormKind::kVariable;
  form.hash_bits = 64;
  form.max_key = 32;
  EXPECT_TRUE(key_form::Computes(form, Bytes(std::string(32, 'k'))));
  EXPECT_FALSE(key_form::Computes(form, Bytes(std::string(33, 'k'))));
  EXPECT_FALSE(key_form::Computes(form, Bytes(std::string(511, 'k'))));
  EXPECT_TRUE(key_form::Computes(form, Bytes(std::string(512, 'k'))));
  for (const KeyFormKind kind : {KeyFormKind::kHashed, KeyFormKind::kDirect, KeyFormKind::kHybrid}) {
    form.kind = kind;
    EXPECT_TRUE(key_form::Computes(form, Bytes(std::string(100, 'k'))));
  }
}

TEST(KeyForm, LookupTableIsAskedEveryStep) {
  EXPECT_EQ(FormOfMap("state", "lookup_table").kind, KeyFormKind::kCallScheme);
}

// Every key's first read candidate and stored key, from the scheme plugin itself (no host guard in between) and
// from its form.
void ExpectTheSchemesOwnAnswers(const std::string& name, uint32_t suffix_size,
                                const std::vector<std::pair<std::string, std::string>>& options) {
  SCOPED_TRACE(name + " before a " + std::to_string(suffix_size) + "-byte suffix");
  SchemeInstance scheme;
  const Status s = scheme.Create(name, suffix_size, options);
  ASSERT_TRUE(s.ok()) << s.message();
  const KeyForm form = scheme->LookupForm();
  ASSERT_TRUE(key_form::Valid(form));
  const Table none;
  std::vector<uint8_t> stored;
  size_t certain = 0;
  size_t uncertain = 0;
  for (const std::string& sample : SampleKeys()) {
    const Bytes key(sample);
    if (!key_form::Computes(form, key)) continue;  // variable's id form: the scheme's own (its table)
    Candidate theirs;
    Candidate ours;
    ErrorBuffer error;
    const Code code = scheme->FirstCandidate(none, key, Intent::kRead, &theirs, &error);
    ASSERT_EQ(key_form::FirstCandidate(form, key, &ours), code) << sample.size() << "-byte key";
    if (code != Code::kOk) continue;
    ASSERT_EQ(ours.certain, theirs.certain);
    ++(ours.certain ? certain : uncertain);
    ASSERT_EQ(ours.prefix.size, theirs.prefix.size);
    ASSERT_EQ(std::memcmp(ours.prefix.bytes, theirs.prefix.bytes, ours.prefix.size), 0) << sample.size();
    const uint32_t size = scheme->StoredKeySize(theirs.prefix, key);
    if (ours.certain) {  // a direct form
      ASSERT_EQ(size, 0u);
      continue;
    }
    stored.assign(size + 3, 0xEE);  // a row's stored key, then the store's part
    scheme->WriteStoredKey(theirs.prefix, key, stored.data());
    uint32_t matched = 0;
    ASSERT_TRUE(key_form::MatchHashedStoredKey(Bytes(stored.data(), stored.size()), key, &matched));
    ASSERT_EQ(matched, size);
    if (key.size != 0) {  // another key of the same length is not this one
      std::string other = sample;
      other.back() = static_cast<char>(other.back() ^ 1);
      ASSERT_FALSE(key_form::MatchHashedStoredKey(Bytes(stored.data(), stored.size()), Bytes(other), &matched));
    }
  }
  // Both sides of every form were tried: direct keys (certain) where the form has them, hashed ones where it does.
  EXPECT_EQ(certain != 0, form.kind != KeyFormKind::kHashed);
  EXPECT_EQ(uncertain != 0, form.kind != KeyFormKind::kDirect);
}

TEST(KeyForm, HashedFormsGiveTheSchemesOwnCandidatesAndStoredKeys) {
  for (const char* bits : {"8", "13", "24", "32", "48", "63", "64"}) {
    for (uint32_t suffix : {0u, 8u, 16u}) ExpectTheSchemesOwnAnswers("hashed", suffix, {{"hash_bits", bits}});
  }
}

TEST(KeyForm, DirectFormsGiveTheSchemesOwnCandidatesAndRefuseTheSameKeys) {
  for (uint32_t suffix : {0u, 8u, 16u, 400u}) ExpectTheSchemesOwnAnswers("direct", suffix, {});
}

TEST(KeyForm, HybridFormsGiveTheSchemesOwnCandidatesAndStoredKeys) {
  for (const char* bits : {"8", "32", "64"}) {
    for (uint32_t suffix : {0u, 8u, 16u}) {
      ExpectTheSchemesOwnAnswers("hybrid", suffix, {{"hash_bits", bits}});  // direct_max: the most the suffix allows
      for (const char* direct_max : {"0", "1", "32", "127", "128", "400"}) {
        ExpectTheSchemesOwnAnswers("hybrid", suffix, {{"hash_bits", bits}, {"direct_max", direct_max}});
      }
    }
  }
}

TEST(KeyForm, VariableFormsGiveTheSchemesOwnCandidatesAndStoredKeys) {
  for (const char* bits : {"8", "32", "64"}) {
    for (uint32_t suffix : {0u, 8u, 16u}) {
      ExpectTheSchemesOwnAnswers("variable", suffix, {{"hash_bits", bits}});  // direct_max 32
      for (const char* direct_max : {"0", "1", "127", "128", "400"}) {
        ExpectTheSchemesOwnAnswers("variable", suffix, {{"hash_bits", bits}, {"direct_max", direct_max}});
      }
    }
  }
}

class MalformedTaggedForms : public ::testing::TestWithParam<KeyFormKind> {};

TEST_P(MalformedTaggedForms, AreNotValid) {
  KeyForm form;
  form.kind = GetParam();
  form.hash_bits = 64;
  form.max_key = 510;
  EXPECT_TRUE(key_form::Valid(form));
  form.max_key = 511;  // with the tag, one past LMDB's key limit
  EXPECT_FALSE(key_form::Valid(form));
  form.max_key = 508;
  form.length_prefixed = 1;
  EXPECT_TRUE(key_form::Valid(form));
  form.max_key = 509;
  EXPECT_FALSE(key_form::Valid(form));
  form.max_key = 32;
  form.length_prefixed = 2;
  EXPECT_FALSE(key_form::Valid(form));
  form.length_prefixed = 0;
  form.hash_bits = 7;
  EXPECT_FALSE(key_form::Valid(form));
  form.hash_bits = 65;
  EXPECT_FALSE(key_form::Valid(form));
  form.hash_bits = 8;
  form.max_key = 0xFFFFFFFFu;  // no wrap-around past the limit
  EXPECT_FALSE(key_form::Valid(form));
  form.kind = static_cast<KeyFormKind>(5);  // a kind from a later SDK
  form.max_key = 32;
  EXPECT_FALSE(key_form::Valid(form));
}

INSTANTIATE_TEST_SUITE_P(Kinds, MalformedTaggedForms, TaggedFormKinds(), TaggedFormKindName);

// A merge reads every batch row of the hashed form with DecodeHashedRow: the same key and sizes as the hashed
// scheme's own DecodeRow, and no answer (the scheme's error instead) where DecodeRow refuses the row.
TEST(KeyForm, HashedRowsDecodeAsTheSchemeDecodesThem) {
  for (const char* bits : {"8", "32", "64"}) {
    SchemeInstance scheme;
    const Status s = scheme.Create("hashed", 8, {{"hash_bits", bits}});
    ASSERT_TRUE(s.ok()) << s.message();
    const KeyForm form = scheme->LookupForm();
    const Table none;
    for (const std::string& sample : SampleKeys()) {
      const Bytes key(sample);
      Candidate candidate;
      ASSERT_EQ(key_form::FirstCandidate(form, key, &candidate), Code::kOk);
      std::string lmdb_key(reinterpret_cast<const char*>(candidate.prefix.bytes), candidate.prefix.size);
      lmdb_key.append(8, '\x01');  // a Temporal State row's time
      std::string value(key_form::HashedStoredKeySize(key), '\0');
      key_form::WriteHashedStoredKey(key, reinterpret_cast<uint8_t*>(value.data()));
      value += "\x02the value";
      Bytes ours_key;
      Bytes theirs_key;
      uint32_t ours[2] = {0, 0};
      uint32_t theirs[2] = {0, 0};
      ErrorBuffer error;
      ASSERT_TRUE(key_form::DecodeHashedRow(form.hash_bits, Bytes(lmdb_key), Bytes(value), &ours_key, &ours[0],
                                            &ours[1]));
      ASSERT_EQ(scheme->DecodeRow(none, Bytes(lmdb_key), Bytes(value), &theirs_key, &theirs[0], &theirs[1], &error),
                Code::kOk);
      ASSERT_EQ(ours_key, theirs_key);
      ASSERT_EQ(ours_key, key);
      ASSERT_EQ(ours[0], theirs[0]);
      ASSERT_EQ(ours[1], theirs[1]);

      // Cut short: the LMDB key before its prefix ends, the value inside its stored key.
      const Bytes short_key(reinterpret_cast<const uint8_t*>(lmdb_key.data()), candidate.prefix.size - 1);
      EXPECT_FALSE(key_form::DecodeHashedRow(form.hash_bits, short_key, Bytes(value), &ours_key, &ours[0],
                                             &ours[1]));
      EXPECT_NE(scheme->DecodeRow(none, short_key, Bytes(value), &theirs_key, &theirs[0], &theirs[1], &error),
                Code::kOk);
      if (key.size != 0) {
        const Bytes cut(reinterpret_cast<const uint8_t*>(value.data()), theirs[1] - 1);
        EXPECT_FALSE(key_form::DecodeHashedRow(form.hash_bits, Bytes(lmdb_key), cut, &ours_key, &ours[0], &ours[1]));
        EXPECT_NE(scheme->DecodeRow(none, Bytes(lmdb_key), cut, &theirs_key, &theirs[0], &theirs[1], &error),
                  Code::kOk);
      }
    }
    const uint8_t padded[] = {0x86, 0x00, 'a', 'b', 'c', 'd', 'e', 'f'};  // a length not in its shortest form
    Bytes k;
    uint32_t sizes[2];
    EXPECT_FALSE(key_form::DecodeHashedRow(form.hash_bits, Bytes(std::string(20, 'h')), Bytes(padded, sizeof(padded)),
                                           &k, &sizes[0], &sizes[1]));
  }
}

TEST(KeyForm, AStoredKeyCutShortOrMalformedIsNoMatch) {
  uint8_t stored[8];
  key_form::WriteHashedStoredKey(Bytes("abcdef"), stored);  // 0x06 "abcdef"
  uint32_t size = 0;
  EXPECT_TRUE(key_form::MatchHashedStoredKey(Bytes(stored, 7), Bytes("abcdef"), &size));
  EXPECT_EQ(size, 7u);
  EXPECT_FALSE(key_form::MatchHashedStoredKey(Bytes(stored, 6), Bytes("abcdef"), &size));  // cut short
  EXPECT_FALSE(key_form::MatchHashedStoredKey(Bytes(stored, 0), Bytes(""), &size));        // no length at all
  const uint8_t padded[] = {0x86, 0x00, 'a', 'b', 'c', 'd', 'e', 'f'};  // 6 in two bytes: not the shortest form
  EXPECT_FALSE(key_form::MatchHashedStoredKey(Bytes(padded, sizeof(padded)), Bytes("abcdef"), &size));
  const uint8_t endless[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};  // over five bytes
  EXPECT_FALSE(key_form::MatchHashedStoredKey(Bytes(endless, sizeof(endless)), Bytes(""), &size));
}

}  // namespace
}  // namespace planb
