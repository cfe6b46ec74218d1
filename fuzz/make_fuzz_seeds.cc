// Writes the generated seed corpora (fuzz/corpus/<target>/gen-*) with the real encoders and writers, so that the
// fuzzers start from messages, zips and answers this code makes: `make_fuzz_seeds <fuzz/corpus dir>`.
// Regenerate after a format change (scripts/fuzz.sh --seeds does both steps); hand-written seeds sit beside them.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "host/commands/lookup_answers.h"
#include "host/commands/lookup_wire.h"
#include "host/common/file_util.h"
#include "host/export/mmdb_data_encoder.h"
#include "host/export/mmdb_file.h"
#include "host/export/mmdb_search_tree.h"
#include "host/ingest/stream_writer.h"
#include "host/transfer/batch_zip.h"
#include "host/transfer/delete_entry.h"
#include "host/transfer/protocol.h"
#include "host/xml/reference_reader.h"

namespace {

namespace p = planb::protocol;
using planb::Status;

std::string out_dir;

void Fail(const std::string& what) {
  std::fprintf(stderr, "make_fuzz_seeds: %s\n", what.c_str());
  std::exit(1);
}

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::string dir = out_dir + "/" + target;
  if (!planb::MakeDirectories(dir).ok()) Fail("cannot create " + dir);
  planb::fuzz::WriteFileOrDie(dir + "/gen-" + name, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// The protocol target's input: its selector byte (fuzz_protocol.cc), then the payload.
void Message(int selector, const std::string& name, const std::string& payload) {
  Write("fuzz_protocol", name, std::string(1, static_cast<char>(selector)) + payload);
}

void ProtocolSeeds() {
  const planb::Token token(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
  Message(0, "header", p::EncodeHeader(p::Command::kBegin, 42));
  Message(1, "begin", p::EncodeBegin({"node1/1700000000000-42-0", 123456, 0xdeadbeef, p::kFlagSynchroniseMerge}));
  Message(2, "ready", p::EncodeReady({token, 4096, 1 << 20, 8}));
  Message(3, "chunk", p::EncodeChunk({token, 1 << 20}));
  Message(4, "chunk_ack", p::EncodeChunkAck({token, 2 << 20}));
  Message(5, "commit", p::EncodeCommit({token}));
  Message(6, "status", p::EncodeStatus({token, 5000}));
  Message(7, "status_reply", p::EncodeStatusReply({p::UploadState::kFailed, 7, 3, "batch refused: map x unknown"}));
  p::ReadRequest lookup;
  lookup.kind = p::ReadKind::kLookup;
  lookup.map = "city_to_country";
  lookup.keys = {"Paris", "Berlin"};
  lookup.format = p::ReadFormat::kWire;
  Message(8, "read_lookup", p::EncodeRead(lookup));
  lookup.time_ms = 1704067200000;
  lookup.quiet = true;
  lookup.format = p::ReadFormat::kJson;
  Message(8, "read_lookup_at", p::EncodeRead(lookup));
  p::ReadRequest query;
  query.kind = p::ReadKind::kQuery;
  query.map = "state";
  query.where = "Key startsWith 'a'";
  query.limit = 10;
  query.explain = true;
  query.format = p::ReadFormat::kCsv;
  Message(8, "read_query", p::EncodeRead(query));
  Message(9, "read_result", p::EncodeReadResult({0, "France\n", ""}));
  Message(10, "snapshot", p::EncodeSnapshot({"state", 3, 0x1234}));
  p::SnapshotOffer offer;
  offer.token = token;
  offer.total_size = 9000;
  offer.checksum = 77;
  offer.batches = 3;
  offer.digest = 0x1234;
  offer.create_time_ms = 1700000000000;
  offer.chunk_size = 1 << 20;
  Message(11, "snapshot_offer", p::EncodeSnapshotOffer(offer));
  Message(12, "fetch", p::EncodeFetch({token, 0, 1 << 20}));
  Message(13, "fetch_data", p::EncodeFetchData({token, 1 << 20}));
  Message(14, "prepare", p::EncodePrepare({{{"state", 1 << 20}, {"ranged", 4096}}}));
  p::PrepareReply reply;
  reply.maps.push_back({"state", p::PrepareVerdict::kOk, 3, 0x99, ""});
  reply.maps.push_back({"ranged", p::PrepareVerdict::kNoRoomInMap, 0, 0, "map ranged: no room"});
  Message(15, "prepare_reply", p::EncodePrepareReply(reply));
  Message(16, "error", p::EncodeError({2, "request too large"}));
  Message(18, "delete_all", planb::DeleteEntryText({1700000000000, true, ""}));
  Message(18, "delete_where", planb::DeleteEntryText({1700000000000, false, "Key = 'a' or KeyStart between 1 and 5"}));
  Message(20, "list_merged", p::EncodeListMerged({"state", "key-0a/content:ff", 100}));
  p::MergedList merged;
  merged.batches = 2;
  merged.digest = 0x77;
  merged.now_ms = 1700000000000;
  merged.ids = {{"key-0a/content:ff", 1699999990000, 1}, {"node1/3", 0, 0}};
  Message(21, "merged_list", p::EncodeMergedList(merged));
  Message(22, "offer_batch", p::EncodeOfferBatch({"key-0a/content:ff"}));
  Message(23, "snapshot_since", p::EncodeSnapshotSince({"state", 3, 0x1234, int64_t{1700000000000}}));
  Message(23, "snapshot_since_never", p::EncodeSnapshotSince({"state", 3, 0x1234, std::nullopt}));

  // `lookup --format wire` answers: a value map and a session map, one key found and one absent.
  for (const bool session : {false, true}) {
    std::ostringstream out;
    planb::LookupShape shape;
    shape.session = session;
    shape.batches = 5;
    auto writer = planb::CreateWireWriter(shape, out);
    planb::Row row;
    row.value = planb::Bytes(std::string_view("France"));
    row.session_start_ms = 1700000000000;
    row.session_end_ms = 1700000600000;
    writer->Found("Paris", 0, row);
    writer->Missing("Atlantis", 0);
    writer->Finish();
    Message(17, session ? "lookup_wire_session" : "lookup_wire", std::string(1, '\2') + out.str());
  }

  // The Reader's remote answers (READ format 6): a type with own fields of every kind; found, absent, refused.
  {
    static const planb::FieldSpec kFields[] = {{"Key", planb::FieldKind::kText, planb::RowField::kKey, 0},
                                               {"Label", planb::FieldKind::kText, planb::RowField::kOwn, 0},
                                               {"Count", planb::FieldKind::kNumber, planb::RowField::kOwn, 0},
                                               {"Ratio", planb::FieldKind::kDouble, planb::RowField::kOwn, 0},
                                               {"Fresh", planb::FieldKind::kBool, planb::RowField::kOwn, 0}};
    planb::PluginDescriptor type;
    type.name = "fielded";
    type.fields = kFields;
    type.field_count = 5;
    std::ostringstream out;
    planb::LookupShape shape;
    shape.type = &type;
    shape.batches = 9;
    auto writer = planb::LookupWriter::Create(planb::LookupFormat::kAnswers, shape, out);
    planb::FieldValue own[5];
    own[1].text = planb::Bytes(std::string_view("x"));
    own[2].number = 3;
    own[3].real = 0.5;
    own[4].flag = true;
    planb::Row row;
    row.value = planb::Bytes(std::string_view("France"));
    row.own_fields = own;
    row.own_field_count = 5;
    writer->Found("Paris", 0, row);
    writer->Missing("Atlantis", 0);
    writer->Refuse("bad", 0, planb::Code::kInvalidArgument, "lookup key 'bad' is not an IP address");
    writer->Finish();
    Message(19, "lookup_answers", std::string(1, '\3') + out.str());
    std::ostringstream none;
    planb::WriteNoDataAnswers(none);
    Message(19, "lookup_answers_no_data", std::string(1, '\1') + none.str());
  }
}

// Reference data for the catalog's maps (one per store type, named after it), written by the real StreamWriter
// and zipped by ZipBatch: a batch stored and one deflated, a replacement and a deletion batch.
constexpr char kXml[] = R"(<referenceData xmlns="reference-data:2">
  <reference><map>state</map><key>a</key><value>1</value></reference>
  <reference><map>state</map><key>b</key><value><x xmlns="urn:x">2</x></value></reference>
  <reference><map>ranged</map><from>1</from><to>9</to><value>r</value></reference>
  <reference><map>temporal</map><time>2024-01-01T00:00:00Z</time><key>k</key><value>t</value></reference>
  <session><map>session</map><key>u</key><time>2024-01-01T08:00:00Z</time><timeout>PT15M</timeout></session>
</referenceData>
)";

std::string ReadAll(const std::string& path) {
  std::string bytes;
  if (!planb::ReadSmallFile(path, &bytes).ok()) Fail("cannot read " + path);
  return bytes;
}

void ZipSeeds() {
  const planb::MapCatalog& catalog = planb::fuzz::Catalog();
  const std::string scratch = planb::fuzz::ScratchDir();
  planb::StreamWriter writer(catalog, scratch + "/stream");
  Status s = planb::ReadReferenceData("seed.xml", kXml, 1700000000000, [&](const planb::ParsedRecord& r) {
    return catalog.maps().count(std::string(r.map)) ? writer.Add(r.map, r.record) : Status();
  });
  if (s.ok()) s = writer.Finish();
  if (!s.ok()) Fail(s.message());
  for (const bool compress : {false, true}) {
    const std::string zip = scratch + (compress ? "/deflated.zip" : "/stored.zip");
    s = planb::ZipBatch(writer.dir(), zip, planb::ZipOptions{compress, "seed/1700000000000-1-0"});
    if (!s.ok()) Fail(s.message());
    Write("fuzz_batch", compress ? "deflated.zip" : "stored.zip", ReadAll(zip));
  }
  // A replacement (format version 4, "replace" in the manifest) of the same maps.
  s = planb::ZipBatch(writer.dir(), scratch + "/replace.zip", planb::ZipOptions{true, "seed/replace-1", true});
  if (!s.ok()) Fail(s.message());
  Write("fuzz_batch", "replace.zip", ReadAll(scratch + "/replace.zip"));
  // A snapshot: one map, as a node serves its shard.
  const std::string one = scratch + "/one";
  s = planb::MakeDirectories(one);
  if (s.ok()) s = planb::DurableRename(writer.dir() + "/state", one + "/state");
  if (s.ok()) s = planb::ZipBatch(one, scratch + "/snapshot.zip", planb::ZipOptions{true, "snapshot/state-1"});
  if (!s.ok()) Fail(s.message());
  Write("fuzz_snapshot", "state.zip", ReadAll(scratch + "/snapshot.zip"));
  // A deletion batch.
  const std::string del = scratch + "/delete";
  s = planb::MakeDirectories(del + "/state");
  if (s.ok()) s = planb::WriteFileAtomically(del + "/state/delete", planb::DeleteEntryText({1700000000000, false, "Key = 'a'"}));
  if (s.ok()) s = planb::ZipBatch(del, scratch + "/delete.zip", planb::ZipOptions{true, "seed/delete-1"});
  if (!s.ok()) Fail(s.message());
  Write("fuzz_batch", "delete.zip", ReadAll(scratch + "/delete.zip"));
}

// MaxMind DB files as `planb export` writes them: an IPv4 tree and an IPv6 one whose ::ffff:0:0/96 leads to the
// IPv4 subtree, records of every JSON type.
void MmdbSeeds() {
  for (const uint32_t bits : {32u, 128u}) {
    planb::MmdbSearchTree tree(bits);
    std::string data;
    std::vector<uint32_t> offsets;
    for (const char* json : {R"({"country":{"iso_code":"GB","names":["UK","Britain"]},"pop":8900000,"lat":51.5})",
                             R"({"eu":true,"neg":-7,"big":340282366920938463463374607431768211455,"small":3})",
                             R"("a plain string")"}) {
      offsets.push_back(static_cast<uint32_t>(data.size()));
      const planb::Status s = planb::AppendMmdbJson(json, &data);
      if (!s.ok()) Fail(s.message());
    }
    const unsigned __int128 ten = static_cast<unsigned __int128>(10u) << 24;  // 10.0.0.0 (under ::/96 in IPv6)
    planb::Status s = tree.Insert(ten, bits - 24, 0);
    if (s.ok()) s = tree.Insert(static_cast<unsigned __int128>(11u) << 24, bits - 16, 1);  // 11.0.0.0/16
    if (s.ok() && bits == 128) {
      s = tree.Insert(static_cast<unsigned __int128>(0x20010db8u) << 96, 32, 2);
      if (s.ok()) s = tree.Alias(static_cast<unsigned __int128>(0xFFFFu) << 32, 0, 96);
    }
    if (!s.ok()) Fail(s.message());
    planb::MmdbMetadata metadata;
    metadata.ip_version = bits == 32 ? 4 : 6;
    metadata.database_type = "PlanB-seed";
    metadata.description = "fuzz seed";
    metadata.build_epoch = 1700000000;
    std::string file;
    s = planb::AssembleMmdb(tree, data, offsets, metadata, &file);
    if (!s.ok()) Fail(s.message());
    Write("fuzz_mmdb", bits == 32 ? "ipv4.mmdb" : "ipv6.mmdb", file);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) Fail("usage: make_fuzz_seeds <fuzz/corpus dir>");
  out_dir = argv[1];
  ProtocolSeeds();
  ZipSeeds();
  MmdbSeeds();
  return 0;
}
