// Deletion batches in the zip format (version 5): `<map>/delete` entries, their bounds and their refusals.
#include <gtest/gtest.h>

#include <limits>
#include <zip.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/transfer/batch_zip.h"
#include "host/transfer/delete_entry.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::ReadFile;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

struct RawEntry {
  std::string name;
  std::string data;
};

void WriteRawZip(const std::string& path, const std::vector<RawEntry>& entries) {
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(zip, nullptr) << error;
  for (const RawEntry& entry : entries) {
    zip_source_t* source = zip_source_buffer(zip, entry.data.data(), entry.data.size(), 0);
    ASSERT_NE(source, nullptr);
    ASSERT_GE(zip_file_add(zip, entry.name.c_str(), source, ZIP_FL_ENC_GUESS), 0) << entry.name;
  }
  ASSERT_EQ(zip_close(zip), 0) << zip_strerror(zip);
}

const std::string kV5 = "planb-batch 5\nid node1/del-1\n";

class BatchZipDeleteTest : public ::testing::Test {
 protected:
  std::string Zip() const { return dir_ / "batch.zip"; }
  std::string Dest() const { return dir_ / "out"; }
  static UnzipLimits Deletes() {
    UnzipLimits limits;
    limits.allow_deletes = true;
    return limits;
  }
  void ExpectRefused(const std::string& part, const UnzipLimits& limits = Deletes()) {
    std::vector<std::string> maps;
    const Status s = UnzipBatch(Zip(), Dest(), limits, &maps);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_NE(s.message().find(Zip()), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
    EXPECT_FALSE(fs::exists(Dest()));
  }
  TempDir dir_;
};

TEST(DeleteEntry, TextRoundTrips) {
  for (const DeleteEntry& entry : {DeleteEntry{1700000000000, true, ""}, DeleteEntry{0, false, "Key = 'a'"},
                                   DeleteEntry{-86400000, false, "Key = 'a'\nor Key = 'b'"},
                                   DeleteEntry{std::numeric_limits<int64_t>::min(), true, ""},
                                   DeleteEntry{std::numeric_limits<int64_t>::max(), true, ""}}) {
    DeleteEntry parsed;
    ASSERT_TRUE(ParseDeleteEntry(DeleteEntryText(entry), &parsed).ok()) << DeleteEntryText(entry);
    EXPECT_EQ(parsed.time_ms, entry.time_ms);
    EXPECT_EQ(parsed.all, entry.all);
    EXPECT_EQ(parsed.where, entry.where);
  }
  EXPECT_EQ(DeleteEntryText(DeleteEntry{5, true, ""}), "time 5\nall\n");
}

TEST(DeleteEntry, RefusesMalformedText) {
  const std::string t = "time 1700000000000\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "no 'time <milliseconds>' line first"},
      {"all\n", "no 'time <milliseconds>' line first"},  // batch format 3's text: no time
      {"time \nall\n", "no 'time <milliseconds>' line first"},
      {"time 12x\nall\n", "no 'time <milliseconds>' line first"},
      {"time +5\nall\n", "no 'time <milliseconds>' line first"},
      {"time -0\nall\n", "no 'time <milliseconds>' line first"},
      {"time 007\nall\n", "no 'time <milliseconds>' line first"},
      {"time  5\nall\n", "no 'time <milliseconds>' line first"},
      {"time 9223372036854775808\nall\n", "no 'time <milliseconds>' line first"},  // past int64
      {"time -9223372036854775809\nall\n", "no 'time <milliseconds>' line first"},
      {"time 99999999999999999999\nall\n", "no 'time <milliseconds>' line first"},
      {"time 5", "no 'time <milliseconds>' line first"},  // no newline
      {t, "not 'all' or 'where"},
      {t + "all", "not 'all' or 'where"},  // no newline
      {t + "all\nall\n", "not 'all' or 'where"},
      {t + "drop everything\n", "not 'all' or 'where"},
      {t + "where \n", "'where' without an expression"},
      {t + "where   \n", "'where' without an expression"},
      {t + "where Key = 'a'", "not 'all' or 'where"},  // no newline
      {t + "where " + std::string(kMaxDeleteEntryBytes, 'x') + "\n", "more than the limit of 65536"},
  };
  for (const auto& [text, part] : bad) {
    SCOPED_TRACE(text.substr(0, 40));
    DeleteEntry parsed;
    const Status s = ParseDeleteEntry(text, &parsed);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  }
}

TEST_F(BatchZipDeleteTest, ZipsAndExtractsADeleteEntry) {
  const std::string batch = dir_ / "writer/stream";
  WriteFile(batch + "/cities/delete", "time 1700000000000\nwhere Key = 'Lyon'\n");
  WriteFile(batch + "/zones/data.mdb", "lmdb bytes");
  ZipOptions options;
  options.batch_id = "node1/del-1";
  ASSERT_TRUE(ZipBatch(batch, Zip(), options).ok());
  std::vector<std::string> maps;
  std::string id;
  const Status s = UnzipBatch(Zip(), Dest(), Deletes(), &maps, &id);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(maps, (std::vector<std::string>{"cities", "zones"}));
  EXPECT_EQ(id, "node1/del-1");
  EXPECT_TRUE(HasDeleteEntry(Dest() + "/cities"));
  EXPECT_FALSE(HasDeleteEntry(Dest() + "/zones"));
  DeleteEntry entry;
  ASSERT_TRUE(ReadDeleteEntry(Dest() + "/cities", &entry).ok());
  EXPECT_FALSE(entry.all);
  EXPECT_EQ(entry.where, "Key = 'Lyon'");
  EXPECT_EQ(entry.time_ms, 1700000000000);
  EXPECT_EQ(ReadFile(Dest() + "/zones/data.mdb"), "lmdb bytes");
  // A batch that deletes says version 5 (older nodes refuse it rather than ignore the deletion or its time).
  int error = 0;
  zip_t* zip = zip_open(Zip().c_str(), ZIP_RDONLY, &error);
  ASSERT_NE(zip, nullptr);
  zip_file_t* file = zip_fopen(zip, "planb-batch", 0);
  ASSERT_NE(file, nullptr);
  char text[64];
  const zip_int64_t n = zip_fread(file, text, sizeof text);
  zip_fclose(file);
  zip_discard(zip);
  EXPECT_EQ(std::string(text, n > 0 ? static_cast<size_t>(n) : 0), "planb-batch 5\nid node1/del-1\n");
}

TEST_F(BatchZipDeleteTest, ZipRefusesAMapWithBothDataAndDelete) {
  const std::string batch = dir_ / "writer/stream";
  WriteFile(batch + "/cities/delete", "time 1\nall\n");
  WriteFile(batch + "/cities/data.mdb", "x");
  ZipOptions options;
  options.batch_id = "node1/del-1";
  const Status s = ZipBatch(batch, Zip(), options);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("both data.mdb and delete"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(Zip()));
}

TEST_F(BatchZipDeleteTest, VersionTwoBatchesStillRead) {
  WriteRawZip(Zip(), {{"planb-batch", "planb-batch 2\nid node1/old\n"}, {"m/data.mdb", "x"}});
  std::vector<std::string> maps;
  std::string id;
  ASSERT_TRUE(UnzipBatch(Zip(), Dest(), UnzipLimits(), &maps, &id).ok());
  EXPECT_EQ(id, "node1/old");
  EXPECT_EQ(maps, std::vector<std::string>{"m"});
}

TEST_F(BatchZipDeleteTest, RefusesADeleteEntryOfAnOlderPlanbWithoutItsTime) {
  for (const char* manifest : {"planb-batch 3\nid node1/old\n", "planb-batch 4\nid node1/old\n"}) {
    SCOPED_TRACE(manifest);
    WriteRawZip(Zip(), {{"planb-batch", manifest}, {"m/delete", "all\n"}});
    ExpectRefused("a delete entry in a planb-batch ");
    ExpectRefused("deletions carry their time since version 5");
  }
}

TEST_F(BatchZipDeleteTest, RefusesADeleteEntryInAVersionTwoBatch) {
  WriteRawZip(Zip(), {{"planb-batch", "planb-batch 2\nid node1/old\n"}, {"m/delete", "all\n"}});
  ExpectRefused("entry 'm/delete': a delete entry in a planb-batch 2 batch");
}

TEST_F(BatchZipDeleteTest, RefusesDeleteEntriesWhereOnlyDataMayBe) {
  WriteRawZip(Zip(), {{"planb-batch", kV5}, {"m/delete", "time 1\nall\n"}});
  ExpectRefused("entry 'm/delete': a delete entry, where only map data may be", UnzipLimits());
}

TEST_F(BatchZipDeleteTest, RefusesATooBigDeleteEntry) {
  WriteRawZip(Zip(), {{"planb-batch", kV5}, {"m/delete", "time 1\nwhere Key = '" + std::string(70000, 'x') + "'\n"}});
  ExpectRefused("entry 'm/delete': delete entry of 70022 bytes, more than the limit of 65536");
}

TEST_F(BatchZipDeleteTest, RefusesAnUnknownVerb) {
  WriteRawZip(Zip(), {{"planb-batch", kV5}, {"m/delete", "time 1\ntruncate\n"}});
  ExpectRefused("entry 'm/delete': delete entry: not 'all' or 'where <expression>'");
}

TEST_F(BatchZipDeleteTest, RefusesAnEmptyExpression) {
  WriteRawZip(Zip(), {{"planb-batch", kV5}, {"m/delete", "time 1\nwhere \n"}});
  ExpectRefused("entry 'm/delete': delete entry: 'where' without an expression");
}

TEST_F(BatchZipDeleteTest, RefusesDataAndDeleteForOneMap) {
  WriteRawZip(Zip(), {{"planb-batch", kV5}, {"m/data.mdb", "x"}, {"m/delete", "time 1\nall\n"}});
  ExpectRefused("entry 'm/delete': map 'm' appears twice");
}

TEST_F(BatchZipDeleteTest, RefusesOtherNamesInAMapDirectory) {
  WriteRawZip(Zip(), {{"planb-batch", kV5}, {"m/deleted", "time 1\nall\n"}});
  ExpectRefused("not <map>/data.mdb or <map>/delete");
}

}  // namespace
}  // namespace planb
