// Errors a plugin RETURNS are attributed as thrown ones are: "<plugin label>: <call>: <its message>", so that an
// operator reading a quarantine reason or a load's error knows which plugin to look at. A miss (kNotFound) is no
// error and is left alone; a message that already names the plugin is not named twice; an error without a message
// says which code came back; a scheme's error returned through a store type names the scheme, which made it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "host/plugin_host/guarded_scheme.h"
#include "host/plugin_host/guarded_store.h"
#include "support/stub_scheme.h"

namespace planb {
namespace {

// A scheme whose value calls answer what the test sets.
class AnsweringScheme final : public testing::StubScheme {
 public:
  Code EncodeValue(const Table&, Bytes, uint8_t*, Bytes*, ErrorBuffer* error) const override {
    if (code == Code::kOk) return Code::kOk;
    if (message.empty()) return code;
    return Fail(error, code, "%s", message.c_str());
  }
  Code code = Code::kOk;
  std::string message;
};

// A store type whose Get and Merge answer what the test sets; Merge first asks the scheme (when given) to encode.
class AnsweringStore final : public Store {
 public:
  explicit AnsweringStore(const KeyScheme* scheme) : scheme_(scheme) {}
  Code Merge(const Table& batch, const Table&, MergeStats*, ErrorBuffer* error) override {
    if (scheme_ != nullptr) {
      uint8_t scratch[kMaxValueRefSize];
      Bytes stored;
      const Code code = scheme_->EncodeValue(batch, Bytes("v"), scratch, &stored, error);
      if (code != Code::kOk) return code;  // handed on as it came, as plugins do
    }
    return Answer(error);
  }
  Code Get(const Table&, const LookupKey&, Row*, ErrorBuffer* error) const override { return Answer(error); }
  Code Put(const Table&, const Record&, ErrorBuffer*) override { return Code::kInternal; }
  Code DecodeRow(const Table&, Bytes, Bytes, Row*, ErrorBuffer*) const override { return Code::kInternal; }
  Code Maintain(const Table&, const MaintainRequest&, MaintainStats*, ErrorBuffer*) override { return Code::kInternal; }
  Code DeleteRow(const Table&, Bytes, Bytes, ErrorBuffer*) override { return Code::kInternal; }
  Code FinishDeletes(const Table&, ErrorBuffer*) override { return Code::kInternal; }
  Code ScanRange(const Table&, const ScanBounds&, KeyRange*, ErrorBuffer*) const override { return Code::kInternal; }

  Code code = Code::kOk;
  std::string message;

 private:
  Code Answer(ErrorBuffer* error) const {
    if (code == Code::kOk || message.empty()) return code;
    return Fail(error, code, "%s", message.c_str());
  }
  const KeyScheme* scheme_;
};

constexpr char kStoreLabel[] = "store type 'answering' (/plugins/libplanb_answering.so)";
constexpr char kSchemeLabel[] = "scheme 'answering' (/plugins/libplanb_answering_key.so)";

TEST(ReturnedErrors, AStoreTypesReturnedErrorNamesThePluginAndTheCall) {
  AnsweringStore inner(nullptr);
  GuardedStore store(&inner, kStoreLabel, nullptr);
  inner.code = Code::kCorruption;
  inner.message = "row 'k' has a 3-byte value; 8 expected";
  ErrorBuffer error;
  MergeStats stats;
  EXPECT_EQ(store.Merge(Table(), Table(), &stats, &error), Code::kCorruption);
  EXPECT_EQ(std::string(error.message),
            std::string(kStoreLabel) + ": Store::Merge: row 'k' has a 3-byte value; 8 expected");
  ErrorBuffer get_error;
  Row row;
  EXPECT_EQ(store.Get(Table(), LookupKey(), &row, &get_error), Code::kCorruption);
  EXPECT_EQ(std::string(get_error.message),
            std::string(kStoreLabel) + ": Store::Get: row 'k' has a 3-byte value; 8 expected");
}

TEST(ReturnedErrors, AMissIsNoErrorAndSuccessLeavesTheBufferAlone) {
  AnsweringStore inner(nullptr);
  GuardedStore store(&inner, kStoreLabel, nullptr);
  Row row;
  ErrorBuffer error;
  inner.code = Code::kNotFound;
  EXPECT_EQ(store.Get(Table(), LookupKey(), &row, &error), Code::kNotFound);
  EXPECT_STREQ(error.message, "");
  inner.code = Code::kOk;
  EXPECT_EQ(store.Get(Table(), LookupKey(), &row, &error), Code::kOk);
  EXPECT_STREQ(error.message, "");
}

TEST(ReturnedErrors, AnErrorWithoutAMessageSaysWhichCodeCameBack) {
  AnsweringStore inner(nullptr);
  GuardedStore store(&inner, kStoreLabel, nullptr);
  inner.code = Code::kInternal;
  ErrorBuffer error;
  MergeStats stats;
  EXPECT_EQ(store.Merge(Table(), Table(), &stats, &error), Code::kInternal);
  EXPECT_EQ(std::string(error.message), std::string(kStoreLabel) + ": Store::Merge: returned internal error without a message");
}

TEST(ReturnedErrors, AMessageThatAlreadyNamesThePluginIsNotNamedTwice) {
  AnsweringStore inner(nullptr);
  GuardedStore store(&inner, kStoreLabel, nullptr);
  inner.code = Code::kIOError;
  inner.message = std::string(kStoreLabel) + ": disk gone";
  ErrorBuffer error;
  MergeStats stats;
  EXPECT_EQ(store.Merge(Table(), Table(), &stats, &error), Code::kIOError);
  EXPECT_EQ(std::string(error.message), std::string(kStoreLabel) + ": disk gone");
}

TEST(ReturnedErrors, ASchemesErrorHandedOnByTheStoreTypeNamesTheScheme) {
  AnsweringScheme scheme_inner;
  std::unique_ptr<GuardedScheme> scheme;
  ASSERT_TRUE(GuardedScheme::Create(&scheme_inner, kSchemeLabel, 10, &scheme).ok());
  AnsweringStore inner(scheme.get());
  GuardedStore store(&inner, kStoreLabel, scheme.get());
  scheme_inner.code = Code::kInvalidArgument;
  scheme_inner.message = "value of 9000 bytes; this scheme stores at most 4096";
  ErrorBuffer error;
  MergeStats stats;
  EXPECT_EQ(store.Merge(Table(), Table(), &stats, &error), Code::kInvalidArgument);
  EXPECT_EQ(std::string(error.message), std::string(kSchemeLabel) +
                                            ": KeyScheme::EncodeValue: value of 9000 bytes; this scheme stores at "
                                            "most 4096");
}

// A message filling the plugin's whole buffer is cut to fit with the prefix, never overrun.
TEST(ReturnedErrors, AFullBufferIsCutToFitWithThePrefix) {
  AnsweringStore inner(nullptr);
  GuardedStore store(&inner, kStoreLabel, nullptr);
  inner.code = Code::kCorruption;
  inner.message = std::string(ErrorBuffer::kCapacity - 1, 'x');
  ErrorBuffer error;
  MergeStats stats;
  EXPECT_EQ(store.Merge(Table(), Table(), &stats, &error), Code::kCorruption);
  const std::string text(error.message);
  EXPECT_EQ(text.size(), ErrorBuffer::kCapacity - 1);
  EXPECT_EQ(text.rfind(std::string(kStoreLabel) + ": Store::Merge: xxx", 0), 0u) << text;
}

}  // namespace
}  // namespace planb
