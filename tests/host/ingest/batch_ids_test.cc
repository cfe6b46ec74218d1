// A load's batch ids: stable for the same records (so a retried load is recognised), different for any other
// content, and a --batch-id that is checked before anything is read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "host/ingest/batch_fingerprint.h"
#include "host/ingest/batch_ids.h"
#include "host/transfer/protocol.h"

namespace planb {
namespace {

using ::testing::HasSubstr;

Record Reference(std::string_view key, int64_t time_ms, std::string_view value) {
  Record r;
  r.has_key = true;
  r.key = Bytes(key);
  r.time_ms = time_ms;
  r.has_value = true;
  r.value = Bytes(value);
  return r;
}

std::string IdOf(const std::vector<std::pair<std::string, Record>>& records, std::string_view purpose = "load") {
  BatchFingerprint fingerprint(purpose);
  for (const auto& [map, record] : records) fingerprint.Add(map, record);
  return fingerprint.BatchId();
}

TEST(BatchFingerprint, TheSameRecordsGiveTheSameIdAndItIsAValidWireId) {
  const std::vector<std::pair<std::string, Record>> records = {{"a", Reference("k1", 5, "v1")},
                                                               {"b", Reference("k2", 6, "v2")}};
  const std::string id = IdOf(records);
  EXPECT_EQ(id, IdOf(records));
  EXPECT_EQ(id.rfind("content:", 0), 0u) << id;
  EXPECT_EQ(id.size(), 8u + 32u);
  EXPECT_TRUE(protocol::IsWireBatchId(id)) << id;
}

TEST(BatchFingerprint, AnyDifferenceInTheRecordsOrThePurposeGivesAnotherId) {
  const std::string base = IdOf({{"a", Reference("k", 5, "v")}});
  EXPECT_NE(base, IdOf({{"b", Reference("k", 5, "v")}}));   // map
  EXPECT_NE(base, IdOf({{"a", Reference("K", 5, "v")}}));   // key
  EXPECT_NE(base, IdOf({{"a", Reference("k", 6, "v")}}));   // time (another effective time)
  EXPECT_NE(base, IdOf({{"a", Reference("k", 5, "w")}}));   // value
  EXPECT_NE(base, IdOf({{"a", Reference("k", 5, "v")}}, "replace"));
  Record typed = Reference("k", 5, "v");
  typed.value_type = ValueType::kXmlFragment;
  EXPECT_NE(base, IdOf({{"a", typed}}));
  Record no_value = Reference("k", 5, "");
  no_value.has_value = false;
  EXPECT_NE(IdOf({{"a", Reference("k", 5, "")}}), IdOf({{"a", no_value}}));
  // Order is content too (a State map keeps the last of a key).
  EXPECT_NE(IdOf({{"a", Reference("k", 5, "1")}, {"a", Reference("k", 5, "2")}}),
            IdOf({{"a", Reference("k", 5, "2")}, {"a", Reference("k", 5, "1")}}));
}

TEST(BatchFingerprint, FieldBoundariesCannotBeShifted) {
  // Without length prefixes "ab" + "c" and "a" + "bc" would hash the same bytes.
  EXPECT_NE(IdOf({{"a", Reference("ab", 5, "c")}}), IdOf({{"a", Reference("a", 5, "bc")}}));
  EXPECT_NE(IdOf({{"ak", Reference("", 5, "v")}}), IdOf({{"a", Reference("k", 5, "v")}}));
}

TEST(GivenBatchId, ValidIdsPass) {
  EXPECT_TRUE(CheckGivenBatchId("2024-06-01").ok());
  EXPECT_TRUE(CheckGivenBatchId("pipeline/run:42_a.b").ok());
  EXPECT_TRUE(CheckGivenBatchId(std::string(kMaxGivenBatchIdBytes, 'x')).ok());
}

TEST(GivenBatchId, MalformedIdsAreRefusedSayingWhatIsWrong) {
  struct Case {
    std::string id;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "--batch-id: empty"},
      {std::string(kMaxGivenBatchIdBytes + 1, 'x'), "201 bytes, more than the 200 allowed"},
      {"run\x01", "'\\x01' at byte 4 is not allowed"},
      {"a\nb", "'\\n' at byte 2 is not allowed"},
      {"a b", "' ' at byte 2 is not allowed"},
      {"caf\xc3\xa9", "at byte 4 is not allowed"},
      {"a\x7f", "at byte 2 is not allowed"},
  };
  for (const Case& c : cases) {
    const Status s = CheckGivenBatchId(c.id);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.id;
    EXPECT_THAT(s.message(), HasSubstr(c.why)) << c.id;
  }
}

TEST(StreamBatchIds, ContentIdsByDefaultTheGivenIdForOneFileNumberedForSeveral) {
  const std::vector<std::string> content = {"content:1", "content:2", "content:3"};
  EXPECT_EQ(StreamBatchIds(std::nullopt, content), content);
  EXPECT_EQ(StreamBatchIds(std::string("run7"), {"content:1"}), std::vector<std::string>{"run7"});
  EXPECT_EQ(StreamBatchIds(std::string("run7"), content),
            (std::vector<std::string>{"run7/1", "run7/2", "run7/3"}));
  for (const std::string& id : StreamBatchIds(std::string(kMaxGivenBatchIdBytes, 'x'), std::vector<std::string>(
                                                                                          100000, "c"))) {
    ASSERT_TRUE(protocol::IsWireBatchId(id)) << id.size();
  }
}

}  // namespace
}  // namespace planb
