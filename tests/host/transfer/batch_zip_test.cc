#include "host/transfer/batch_zip.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::ReadFile;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

// Bytes that neither repeat trivially nor are incompressible, like LMDB pages: runs of a counter and zeros.
std::string SomeBytes(size_t size, uint32_t seed) {
  std::string out(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; i += 64) {
    x = x * 1664525u + 1013904223u;
    std::memcpy(&out[i], &x, std::min<size_t>(4, size - i));
  }
  return out;
}

struct RawEntry {
  std::string name;
  std::string data;
  bool compress = true;
};

// Writes a zip holding exactly `entries` (in order) with libzip, whatever the batch rules say.
void WriteRawZip(const std::string& path, const std::vector<RawEntry>& entries) {
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(zip, nullptr) << error;
  for (const RawEntry& entry : entries) {
    zip_source_t* source = zip_source_buffer(zip, entry.data.data(), entry.data.size(), 0);
    ASSERT_NE(source, nullptr);
    zip_int64_t index = zip_file_add(zip, entry.name.c_str(), source, ZIP_FL_ENC_GUESS);
    ASSERT_GE(index, 0) << entry.name << ": " << zip_strerror(zip);
    ASSERT_EQ(zip_set_file_compression(zip, index, entry.compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0), 0);
  }
  ASSERT_EQ(zip_close(zip), 0) << zip_strerror(zip);
}

const std::string kManifest = "planb-batch 2\nid node1/stream-1\n";

ZipOptions Options(bool compress = true) {
  ZipOptions options;
  options.compress = compress;
  options.batch_id = "node1/stream-1";
  return options;
}

std::vector<std::string> EntryNames(const std::string& path) {
  std::vector<std::string> names;
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY, &error);
  EXPECT_NE(zip, nullptr);
  if (zip == nullptr) return names;
  for (zip_int64_t i = 0; i < zip_get_num_entries(zip, 0); ++i) names.push_back(zip_get_name(zip, i, 0));
  zip_discard(zip);
  return names;
}

// Offsets of the uncompressed-size field of `name`'s local header and central directory record, found by the
// signatures in front of the name (libzip writes neither data descriptors nor, here, zip64 fields).
struct HeaderOffsets {
  size_t local_name = 0;    // where the name starts in the local header
  size_t central_name = 0;  // where the name starts in the central directory
};
HeaderOffsets FindHeaders(const std::string& bytes, const std::string& name) {
  HeaderOffsets out;
  for (size_t pos = bytes.find(name); pos != std::string::npos; pos = bytes.find(name, pos + 1)) {
    if (pos >= 30 && bytes.compare(pos - 30, 4, "PK\3\4") == 0) out.local_name = pos;
    if (pos >= 46 && bytes.compare(pos - 46, 4, "PK\1\2") == 0) out.central_name = pos;
  }
  EXPECT_NE(out.local_name, 0u) << name;
  EXPECT_NE(out.central_name, 0u) << name;
  return out;
}

void Put32(std::string* bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) (*bytes)[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
uint32_t Get32(const std::string& bytes, size_t offset) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= uint32_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  return value;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class BatchZipTest : public ::testing::Test {
 protected:
  std::string Zip() const { return dir_ / "batch.zip"; }
  std::string Dest() const { return dir_ / "out"; }

  // Unzips Zip() and expects `code`, a message naming the zip and `part`, and nothing left at Dest().
  void ExpectRefused(Code code, const std::string& part, const UnzipLimits& limits = UnzipLimits()) {
    std::vector<std::string> maps;
    const Status s = UnzipBatch(Zip(), Dest(), limits, &maps);
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_TRUE(Contains(s.message(), Zip())) << s.message();
    EXPECT_TRUE(Contains(s.message(), part)) << s.message();
    EXPECT_FALSE(fs::exists(Dest())) << s.message();
  }

  TempDir dir_;
};

TEST_F(BatchZipTest, RoundTripKeepsBytesStoredAndCompressed) {
  const std::string batch = dir_ / "writer/stream";
  // "beta" crosses the 1 MiB copy block; lock.mdb must stay behind.
  const std::string alpha = SomeBytes(40000, 1);
  const std::string beta = SomeBytes((size_t{5} << 19) + 123, 2);
  WriteFile(batch + "/beta/data.mdb", beta);
  WriteFile(batch + "/beta/lock.mdb", "lock");
  WriteFile(batch + "/alpha/data.mdb", alpha);
  for (bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "compressed" : "stored");
    ZipOptions options = Options(compress);
    options.batch_id = "node1a/1700000000000-42-0 with spaces, ünïcode";
    ASSERT_TRUE(ZipBatch(batch, Zip(), options).ok());
    EXPECT_FALSE(fs::exists(Zip() + ".tmp"));
    EXPECT_EQ(EntryNames(Zip()), (std::vector<std::string>{"planb-batch", "alpha/data.mdb", "beta/data.mdb"}));
    if (compress) {
      EXPECT_LT(fs::file_size(Zip()), alpha.size() + beta.size());
    } else {
      EXPECT_GT(fs::file_size(Zip()), alpha.size() + beta.size());
    }

    std::vector<std::string> maps;
    std::string batch_id;
    const Status s = UnzipBatch(Zip(), Dest(), UnzipLimits(), &maps, &batch_id);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(maps, (std::vector<std::string>{"alpha", "beta"}));
    EXPECT_EQ(batch_id, options.batch_id);
    EXPECT_EQ(ReadFile(Dest() + "/alpha/data.mdb"), alpha);
    EXPECT_EQ(ReadFile(Dest() + "/beta/data.mdb"), beta);
    EXPECT_FALSE(fs::exists(Dest() + "/beta/lock.mdb"));
    fs::remove_all(Dest());

    // As the merge extracts into merging/ (scratch, not synced): the same maps and bytes.
    UnzipLimits scratch;
    scratch.sync = false;
    const Status unsynced = UnzipBatch(Zip(), Dest(), scratch, &maps);
    ASSERT_TRUE(unsynced.ok()) << unsynced.message();
    EXPECT_EQ(maps, (std::vector<std::string>{"alpha", "beta"}));
    EXPECT_EQ(ReadFile(Dest() + "/alpha/data.mdb"), alpha);
    EXPECT_EQ(ReadFile(Dest() + "/beta/data.mdb"), beta);
    fs::remove_all(Dest());
  }
}

TEST_F(BatchZipTest, EmptyBatchIsManifestOnly) {
  fs::create_directories(dir_ / "empty");
  ASSERT_TRUE(ZipBatch(dir_ / "empty", Zip(), Options()).ok());
  EXPECT_EQ(EntryNames(Zip()), std::vector<std::string>{"planb-batch"});
  std::vector<std::string> maps{"stale"};
  const Status s = UnzipBatch(Zip(), Dest(), UnzipLimits(), &maps);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(maps.empty());
  EXPECT_TRUE(fs::is_directory(Dest()));
  EXPECT_TRUE(fs::is_empty(Dest()));
}

TEST_F(BatchZipTest, ZipRefusesUnfinishedOrForeignDirectories) {
  fs::create_directories(dir_ / "a/m");  // no data.mdb
  Status s = ZipBatch(dir_ / "a", Zip(), Options());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), dir_ / "a/m")) << s.message();
  WriteFile(dir_ / "b/City/data.mdb", "x");
  s = ZipBatch(dir_ / "b", Zip(), Options());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'City'")) << s.message();
  s = ZipBatch(dir_ / "missing", Zip(), Options());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_TRUE(Contains(s.message(), dir_ / "missing")) << s.message();
  EXPECT_FALSE(fs::exists(Zip()));
  EXPECT_FALSE(fs::exists(Zip() + ".tmp"));
}

TEST_F(BatchZipTest, RefusesNamesThatAreNotMapDataFiles) {
  const std::vector<std::string> bad = {"../evil",      "/abs/data.mdb", "m/../../x/data.mdb", "m\\data.mdb",
                                        "m/lock.mdb",   "notes.txt",     "City/data.mdb",      "m/",
                                        "m/data.mdb/x", "./m/data.mdb",  "m//data.mdb",        "1m/data.mdb"};
  for (const std::string& name : bad) {
    SCOPED_TRACE(name);
    WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"good/data.mdb", "g"}, {name, "x"}});
    ExpectRefused(Code::kInvalidArgument, "entry '" + name + "'");
  }
}

TEST_F(BatchZipTest, RefusesControlBytesEscaped) {
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {std::string("m\x01/data.mdb"), "x"}});
  ExpectRefused(Code::kInvalidArgument, "entry 'm\\x01/data.mdb'");
}

TEST_F(BatchZipTest, RefusesMissingManifest) {
  WriteRawZip(Zip(), {{"m/data.mdb", "x"}});
  ExpectRefused(Code::kInvalidArgument, "entry 'm/data.mdb': the first entry must be the 'planb-batch' manifest");
}

TEST_F(BatchZipTest, RefusesManifestNotFirst) {
  WriteRawZip(Zip(), {{"m/data.mdb", "x"}, {"planb-batch", kManifest}});
  ExpectRefused(Code::kInvalidArgument, "entry 'm/data.mdb'");
}

// Version 2: a batch without delete entries stays readable by nodes that know no version 3.
TEST_F(BatchZipTest, ManifestIsVersionTwoWithTheBatchId) {
  WriteFile(dir_ / "b/m/data.mdb", "x");
  ASSERT_TRUE(ZipBatch(dir_ / "b", Zip(), Options()).ok());
  int error = 0;
  zip_t* zip = zip_open(Zip().c_str(), ZIP_RDONLY, &error);
  ASSERT_NE(zip, nullptr);
  zip_file_t* file = zip_fopen(zip, "planb-batch", 0);
  ASSERT_NE(file, nullptr);
  char text[128];
  const zip_int64_t n = zip_fread(file, text, sizeof text);
  zip_fclose(file);
  zip_discard(zip);
  EXPECT_EQ(std::string(text, n > 0 ? static_cast<size_t>(n) : 0), "planb-batch 2\nid node1/stream-1\n");
}

TEST_F(BatchZipTest, AReplacementIsVersionFourWithAReplaceLineAndUnzipsAsSuch) {
  WriteFile(dir_ / "b/m/data.mdb", "x");
  ZipOptions options = Options();
  options.replace = true;
  ASSERT_TRUE(ZipBatch(dir_ / "b", Zip(), options).ok());
  std::vector<std::string> maps;
  std::string id;
  bool replace = false;
  ASSERT_TRUE(UnzipBatch(Zip(), Dest(), UnzipLimits(), &maps, &id, &replace).ok());
  EXPECT_TRUE(replace);
  EXPECT_EQ(id, "node1/stream-1");
  EXPECT_EQ(maps, std::vector<std::string>{"m"});
  // An ordinary batch says no.
  ASSERT_TRUE(ZipBatch(dir_ / "b", dir_ / "plain.zip", Options()).ok());
  ASSERT_TRUE(UnzipBatch(dir_ / "plain.zip", dir_ / "plain", UnzipLimits(), &maps, &id, &replace).ok());
  EXPECT_FALSE(replace);
  // Version 4 without the line is an ordinary batch too.
  WriteRawZip(dir_ / "v4.zip", {{"planb-batch", "planb-batch 4\nid x\n"}, {"m/data.mdb", "x"}});
  ASSERT_TRUE(UnzipBatch(dir_ / "v4.zip", dir_ / "v4", UnzipLimits(), &maps, &id, &replace).ok());
  EXPECT_FALSE(replace);
}

TEST_F(BatchZipTest, RefusesAReplaceLineOutsideVersionFourAnyOtherLineAndDeletesInAReplacement) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"planb-batch 3\nid x\nreplace\n", "unexpected manifest line 'replace' in planb-batch 3"},
      {"planb-batch 2\nid x\nreplace", "unexpected manifest line 'replace' in planb-batch 2"},
      {"planb-batch 4\nid x\nreplace all\n", "unexpected manifest line 'replace all' in planb-batch 4"},
      {"planb-batch 4\nid x\nreplace\nreplace\n", "unexpected manifest line 'replace\\x0areplace'"},
      {"planb-batch 4\nid x\n\n", "unexpected manifest line ''"},
  };
  for (const auto& [manifest, part] : bad) {
    SCOPED_TRACE(manifest);
    WriteRawZip(Zip(), {{"planb-batch", manifest}, {"m/data.mdb", "x"}});
    ExpectRefused(Code::kInvalidArgument, "entry 'planb-batch': " + part);
  }
  UnzipLimits deletes;
  deletes.allow_deletes = true;
  for (const char* manifest : {"planb-batch 4\nid x\nreplace\n", "planb-batch 5\nid x\nreplace\n"}) {
    WriteRawZip(Zip(), {{"planb-batch", manifest}, {"m/delete", "time 1\nall\n"}});
    ExpectRefused(Code::kInvalidArgument, "entry 'm/delete': a delete entry in a replacement batch", deletes);
  }
}

TEST_F(BatchZipTest, ZipRefusesAMissingOrBadBatchId) {
  WriteFile(dir_ / "b/m/data.mdb", "x");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "batch id ''"},
      {"two\nlines", "batch id 'two\\x0alines'"},
      {std::string("nul\0byte", 8), "batch id 'nul\\x00byte'"},
      {"tab\there", "batch id 'tab\\x09here'"},
      {std::string(512, 'x'), "a batch id of 512 bytes"},
  };
  for (const auto& [id, named] : bad) {
    SCOPED_TRACE(named);
    ZipOptions options = Options();
    options.batch_id = id;
    const Status s = ZipBatch(dir_ / "b", Zip(), options);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_TRUE(Contains(s.message(), named)) << s.message();
    EXPECT_TRUE(Contains(s.message(), dir_ / "b")) << s.message();
    EXPECT_FALSE(fs::exists(Zip()));
    EXPECT_FALSE(fs::exists(Zip() + ".tmp"));
  }
  ZipOptions longest = Options();
  longest.batch_id = std::string(511, 'x');
  ASSERT_TRUE(ZipBatch(dir_ / "b", Zip(), longest).ok());
  std::vector<std::string> maps;
  std::string batch_id;
  ASSERT_TRUE(UnzipBatch(Zip(), Dest(), UnzipLimits(), &maps, &batch_id).ok());
  EXPECT_EQ(batch_id, longest.batch_id);
}

TEST_F(BatchZipTest, RefusesAVersionOneManifestAsWrittenByAnOlderPlanb) {
  WriteRawZip(Zip(), {{"planb-batch", "planb-batch 1\n"}, {"m/data.mdb", "x"}});
  ExpectRefused(Code::kInvalidArgument, "entry 'planb-batch': planb-batch 1 (written by an older planb");
  ExpectRefused(Code::kInvalidArgument, "reload the source data");
}

TEST_F(BatchZipTest, RefusesAVersionTwoManifestWithoutAValidId) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"planb-batch 2\n", "no 'id <batch id>' line after 'planb-batch 2' (found '')"},
      {"planb-batch 2", "no 'id <batch id>' line"},
      {"planb-batch 2\nname x\n", "no 'id <batch id>' line after 'planb-batch 2' (found 'name x')"},
      {"planb-batch 2\nid \n", "batch id '' is not valid"},
      {"planb-batch 2\nid a\tb\n", "batch id 'a\\x09b' is not valid"},
      {"planb-batch 2\nid a\nid b\n", "unexpected manifest line 'id b' in planb-batch 2"},
      {"planb-batch 2\nid " + std::string(512, 'x') + "\n", "a batch id of 512 bytes is not valid (1 to 511 bytes"},
  };
  for (const auto& [manifest, part] : bad) {
    SCOPED_TRACE(manifest);
    WriteRawZip(Zip(), {{"planb-batch", manifest}, {"m/data.mdb", "x"}});
    ExpectRefused(Code::kInvalidArgument, "entry 'planb-batch': " + part);
  }
}

TEST_F(BatchZipTest, RefusesOtherFormatVersion) {
  WriteRawZip(Zip(), {{"planb-batch", "planb-batch 6\nid x\n"}, {"m/data.mdb", "x"}});
  ExpectRefused(Code::kInvalidArgument, "entry 'planb-batch': batch format version '6', this build reads 2 to 5");
  WriteRawZip(Zip(), {{"planb-batch", "hello"}, {"m/data.mdb", "x"}});
  ExpectRefused(Code::kInvalidArgument, "entry 'planb-batch': not a Plan B batch manifest");
}

TEST_F(BatchZipTest, RefusesMapTwice) {
  // libzip will not write a name twice; rename the second entry in place (same length, CRC covers only data).
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"m/data.mdb", "x"}, {"n/data.mdb", "y"}});
  std::string bytes = ReadFile(Zip());
  const HeaderOffsets n = FindHeaders(bytes, "n/data.mdb");
  bytes[n.local_name] = 'm';
  bytes[n.central_name] = 'm';
  WriteFile(Zip(), bytes);
  ExpectRefused(Code::kInvalidArgument, "entry 'm/data.mdb': map 'm' appears twice");
}

TEST_F(BatchZipTest, RefusesTooManyEntries) {
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"a/data.mdb", "x"}, {"b/data.mdb", "y"}});
  UnzipLimits limits;
  limits.max_entries = 2;
  ExpectRefused(Code::kInvalidArgument, "3 entries, more than the limit of 2", limits);
}

TEST_F(BatchZipTest, RefusesZipBombBeforeWritingAnything) {
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"m/data.mdb", std::string(50 << 20, '\0')}});
  ASSERT_LT(fs::file_size(Zip()), size_t{1} << 20);  // small zip, huge declared size
  UnzipLimits limits;
  limits.max_total_bytes = 1 << 20;
  ExpectRefused(Code::kInvalidArgument, "entry 'm/data.mdb': declared sizes add up to more than the limit", limits);
}

TEST_F(BatchZipTest, RefusesEntryLargerThanDeclared) {
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"m/data.mdb", SomeBytes(100000, 3)}});
  std::string bytes = ReadFile(Zip());
  const HeaderOffsets m = FindHeaders(bytes, "m/data.mdb");
  // Uncompressed size: 8 bytes before the name in the local header, 22 in the central directory.
  ASSERT_EQ(Get32(bytes, m.local_name - 8), 100000u);
  Put32(&bytes, m.local_name - 8, 1000);
  Put32(&bytes, m.central_name - 22, 1000);
  WriteFile(Zip(), bytes);
  ExpectRefused(Code::kCorruption, "entry 'm/data.mdb'");
}

TEST_F(BatchZipTest, RefusesTruncatedZip) {
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"m/data.mdb", SomeBytes(100000, 4)}});
  const std::string bytes = ReadFile(Zip());
  WriteFile(Zip(), bytes.substr(0, bytes.size() / 2));
  ExpectRefused(Code::kCorruption, "truncated or damaged zip");
}

TEST_F(BatchZipTest, RefusesCorruptedEntryData) {
  for (bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "compressed" : "stored");
    WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"m/data.mdb", SomeBytes(300000, 5), compress}});
    std::string bytes = ReadFile(Zip());
    const HeaderOffsets m = FindHeaders(bytes, "m/data.mdb");
    const uint32_t compressed = Get32(bytes, m.local_name - 12);
    const size_t data = m.local_name + std::strlen("m/data.mdb") +
                        (static_cast<unsigned char>(bytes[m.local_name - 2]) |
                         static_cast<unsigned char>(bytes[m.local_name - 1]) << 8);
    for (size_t i = 0; i < 16; ++i) bytes[data + compressed / 2 + i] ^= 0x5a;
    WriteFile(Zip(), bytes);
    ExpectRefused(Code::kCorruption, "entry 'm/data.mdb'");
  }
}

TEST_F(BatchZipTest, RefusesNotAZip) {
  WriteFile(Zip(), "this is not a zip archive, just some text that is long enough\n");
  ExpectRefused(Code::kInvalidArgument, "not a zip archive");
  WriteFile(Zip(), "");
  ExpectRefused(Code::kInvalidArgument, "not a zip archive");
  fs::remove(Zip());
  ExpectRefused(Code::kIOError, "opening");
}

TEST_F(BatchZipTest, RefusesExistingDestination) {
  WriteRawZip(Zip(), {{"planb-batch", kManifest}, {"m/data.mdb", "x"}});
  fs::create_directories(Dest());
  WriteFile(Dest() + "/keep", "mine");
  std::vector<std::string> maps;
  const Status s = UnzipBatch(Zip(), Dest(), UnzipLimits(), &maps);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), Dest() + ": already exists")) << s.message();
  EXPECT_TRUE(Contains(s.message(), Zip())) << s.message();
  EXPECT_EQ(ReadFile(Dest() + "/keep"), "mine");  // not ours to remove
}

}  // namespace
}  // namespace planb
