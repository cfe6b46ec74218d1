#include "host/transfer/protocol.h"

#include <cstdio>
#include <cstring>

#include "planb/encoding.h"

namespace planb::protocol {

namespace {

class PayloadWriter {
 public:
  PayloadWriter& U8(uint8_t v) {
    out_.push_back(static_cast<char>(v));
    return *this;
  }
  PayloadWriter& U16(uint16_t v) { return Put(v, 2, PutU16); }
  PayloadWriter& U32(uint32_t v) { return Put(v, 4, PutU32); }
  PayloadWriter& U64(uint64_t v) { return Put(v, 8, PutU64); }
  PayloadWriter& Tok(const Token& t) { return U64(t.high).U64(t.low); }
  PayloadWriter& String(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
    return *this;
  }
  std::string Take() { return std::move(out_); }

 private:
  template <typename T>
  PayloadWriter& Put(T v, size_t width, void (*put)(uint8_t*, T)) {
    uint8_t bytes[8];
    put(bytes, v);
    out_.append(reinterpret_cast<const char*>(bytes), width);
    return *this;
  }
  std::string out_;
};

// Reads fields in order; the first failure is kept and later reads do nothing, so a decoder reads every field
// and checks once at the end.
class PayloadReader {
 public:
  PayloadReader(std::string_view payload, const char* command) : in_(payload), command_(command) {}

  PayloadReader& U8(const char* field, uint8_t* v) {
    if (const uint8_t* p = Take(field, 1)) *v = p[0];
    return *this;
  }
  PayloadReader& U16(const char* field, uint16_t* v) {
    if (const uint8_t* p = Take(field, 2)) *v = GetU16(p);
    return *this;
  }
  PayloadReader& U32(const char* field, uint32_t* v) {
    if (const uint8_t* p = Take(field, 4)) *v = GetU32(p);
    return *this;
  }
  PayloadReader& U64(const char* field, uint64_t* v) {
    if (const uint8_t* p = Take(field, 8)) *v = GetU64(p);
    return *this;
  }
  PayloadReader& Tok(const char* field, Token* v) { return U64(field, &v->high).U64(field, &v->low); }
  PayloadReader& String(const char* field, std::string* v) {
    uint32_t length = 0;
    if (Take(field, 4) == nullptr) return *this;
    length = GetU32(reinterpret_cast<const uint8_t*>(in_.data() + pos_ - 4));
    if (length > in_.size() - pos_) {
      return Fail(std::string(command_) + " payload: string field " + field + " declares " + std::to_string(length) +
                  " bytes but only " + std::to_string(in_.size() - pos_) + " remain");
    }
    v->assign(in_.data() + pos_, length);
    pos_ += length;
    return *this;
  }
  size_t remaining() const { return status_.ok() ? in_.size() - pos_ : 0; }
  bool ok() const { return status_.ok(); }
  PayloadReader& Fail(std::string message) {
    if (status_.ok()) status_ = Status::Invalid(std::move(message));
    return *this;
  }
  // The first error, or an error for bytes after the last field.
  Status Finish() {
    if (status_.ok() && pos_ != in_.size()) {
      return Status::Invalid(std::string(command_) + " payload of " + std::to_string(in_.size()) + " bytes has " +
                             std::to_string(in_.size() - pos_) + " bytes after its last field");
    }
    return std::move(status_);
  }

 private:
  const uint8_t* Take(const char* field, size_t width) {
    if (!status_.ok()) return nullptr;
    if (in_.size() - pos_ < width) {
      Fail(std::string(command_) + " payload of " + std::to_string(in_.size()) + " bytes ends inside field " + field +
           " (needs " + std::to_string(width) + " bytes at offset " + std::to_string(pos_) + ")");
      return nullptr;
    }
    const uint8_t* p = reinterpret_cast<const uint8_t*>(in_.data() + pos_);
    pos_ += width;
    return p;
  }

  std::string_view in_;
  const char* command_;
  size_t pos_ = 0;
  Status status_;
};

}  // namespace

std::string CommandName(uint16_t command) {
  switch (static_cast<Command>(command)) {
    case Command::kBegin:
      return "BEGIN";
    case Command::kChunk:
      return "CHUNK";
    case Command::kCommit:
      return "COMMIT";
    case Command::kStatus:
      return "STATUS";
    case Command::kRead:
      return "READ";
    case Command::kReadResult:
      return "READ_RESULT";
    case Command::kSnapshot:
      return "SNAPSHOT";
    case Command::kFetch:
      return "FETCH";
    case Command::kSnapshotOffer:
      return "SNAPSHOT_OFFER";
    case Command::kFetchData:
      return "FETCH_DATA";
    case Command::kPrepare:
      return "PREPARE";
    case Command::kPrepareReply:
      return "PREPARE_REPLY";
    case Command::kListMerged:
      return "LIST_MERGED";
    case Command::kMergedList:
      return "MERGED_LIST";
    case Command::kOfferBatch:
      return "OFFER_BATCH";
    case Command::kSnapshotSince:
      return "SNAPSHOT_SINCE";
    case Command::kReady:
      return "READY";
    case Command::kChunkAck:
      return "CHUNK_ACK";
    case Command::kStatusReply:
      return "STATUS reply";
    case Command::kError:
      return "ERROR";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "command 0x%04x", command);
  return buffer;
}

bool IsRequest(uint16_t command) {
  switch (static_cast<Command>(command)) {
    case Command::kBegin:
    case Command::kChunk:
    case Command::kCommit:
    case Command::kStatus:
    case Command::kRead:
    case Command::kSnapshot:
    case Command::kFetch:
    case Command::kPrepare:
    case Command::kListMerged:
    case Command::kOfferBatch:
    case Command::kSnapshotSince:
      return true;
    default:
      return false;
  }
}

std::string EncodeHeader(Command command, uint64_t request_id) {
  uint8_t bytes[kHeaderSize];
  std::memcpy(bytes, kMagic, 4);
  PutU16(bytes + 4, kProtocolVersion);
  PutU16(bytes + 6, static_cast<uint16_t>(command));
  PutU64(bytes + 8, request_id);
  return std::string(reinterpret_cast<const char*>(bytes), kHeaderSize);
}

Status DecodeHeader(std::string_view frame, Header* header) {
  const auto* p = reinterpret_cast<const uint8_t*>(frame.data());
  // Read what is there first, so that an error reply can echo the request id of a header with a bad magic.
  if (frame.size() >= 6) header->version = GetU16(p + 4);
  if (frame.size() >= 8) header->command = GetU16(p + 6);
  if (frame.size() >= kHeaderSize) header->request_id = GetU64(p + 8);
  if (frame.size() < kHeaderSize) {
    return Status::Invalid("message header of " + std::to_string(frame.size()) + " bytes is shorter than the " +
                           std::to_string(kHeaderSize) + " a header needs");
  }
  if (std::memcmp(p, kMagic, 4) != 0) {
    char shown[40];
    std::snprintf(shown, sizeof shown, "%02x %02x %02x %02x", p[0], p[1], p[2], p[3]);
    return Status::Invalid(std::string("message header starts with bytes ") + shown +
                           ", not the magic \"PLNB\" (not a Plan B upload message)");
  }
  return Status::Ok();
}

const char* UploadStateName(UploadState state) {
  switch (state) {
    case UploadState::kReceiving:
      return "receiving";
    case UploadState::kVerifying:
      return "verifying";
    case UploadState::kStaged:
      return "staged";
    case UploadState::kMerged:
      return "merged";
    case UploadState::kFailed:
      return "failed";
    case UploadState::kMergeFailed:
      return "merge failed";
    case UploadState::kAlreadyMerged:
      return "already merged";
  }
  return "unknown";
}

std::string EncodeBegin(const BeginRequest& m) {
  return PayloadWriter().String(m.batch_id).U64(m.total_size).U64(m.tail_hash).U32(m.flags).Take();
}
std::string EncodeReady(const ReadyReply& m) {
  return PayloadWriter().Tok(m.token).U64(m.resume_offset).U32(m.chunk_size).U32(m.window).Take();
}
std::string EncodeChunk(const ChunkRequest& m) { return PayloadWriter().Tok(m.token).U64(m.offset).Take(); }
std::string EncodeChunkAck(const ChunkAck& m) { return PayloadWriter().Tok(m.token).U64(m.received_total).Take(); }
std::string EncodeCommit(const CommitRequest& m) { return PayloadWriter().Tok(m.token).U64(m.checksum).Take(); }
std::string EncodeStatus(const StatusRequest& m) { return PayloadWriter().Tok(m.token).U32(m.hold_ms).Take(); }
std::string EncodeStatusReply(const StatusReply& m) {
  return PayloadWriter().U8(static_cast<uint8_t>(m.state)).U64(m.sequence).U16(m.code).String(m.message).Take();
}
namespace {
// READ's flag bits, by kind.
constexpr uint8_t kLookupHasTime = 1;
constexpr uint8_t kLookupQuiet = 2;
constexpr uint8_t kQueryHasWhere = 1;
constexpr uint8_t kQueryHasLimit = 2;
constexpr uint8_t kQueryExplain = 4;
}  // namespace

std::string ReadKindName(uint8_t kind) {
  switch (static_cast<ReadKind>(kind)) {
    case ReadKind::kLookup:
      return "lookup";
    case ReadKind::kQuery:
      return "query";
  }
  return "read kind " + std::to_string(kind);
}

std::string EncodeRead(const ReadRequest& m) {
  PayloadWriter writer;
  writer.U8(static_cast<uint8_t>(m.kind)).String(m.map).U8(static_cast<uint8_t>(m.format));
  if (m.kind == ReadKind::kLookup) {
    writer.U8(static_cast<uint8_t>((m.time_ms ? kLookupHasTime : 0) | (m.quiet ? kLookupQuiet : 0)));
    if (m.time_ms) writer.U64(static_cast<uint64_t>(*m.time_ms));
    writer.U32(static_cast<uint32_t>(m.keys.size()));
    for (const std::string& key : m.keys) writer.String(key);
  } else {
    writer.U8(static_cast<uint8_t>((m.where ? kQueryHasWhere : 0) | (m.limit ? kQueryHasLimit : 0) |
                                   (m.explain ? kQueryExplain : 0)));
    if (m.where) writer.String(*m.where);
    if (m.limit) writer.U64(*m.limit);
  }
  return writer.Take();
}
std::string EncodeReadResult(const ReadResult& m) {
  return PayloadWriter().U32(static_cast<uint32_t>(m.exit_code)).String(m.out).String(m.err).Take();
}
std::string EncodeSnapshot(const SnapshotRequest& m) {
  return PayloadWriter().String(m.map).U64(m.have_batches).U64(m.have_digest).Take();
}
std::string EncodeSnapshotSince(const SnapshotSinceRequest& m) {
  return PayloadWriter()
      .String(m.map)
      .U64(m.have_batches)
      .U64(m.have_digest)
      .U8(m.last_condensed_ms ? 1 : 0)
      .U64(static_cast<uint64_t>(m.last_condensed_ms.value_or(0)))
      .Take();
}
std::string EncodeSnapshotOffer(const SnapshotOffer& m) {
  return PayloadWriter()
      .U8(m.not_modified)
      .Tok(m.token)
      .U64(m.total_size)
      .U64(m.checksum)
      .U64(m.batches)
      .U64(m.digest)
      .U64(static_cast<uint64_t>(m.create_time_ms))
      .U32(m.chunk_size)
      .Take();
}
std::string EncodeFetch(const FetchRequest& m) { return PayloadWriter().Tok(m.token).U64(m.offset).U32(m.length).Take(); }
std::string EncodeFetchData(const FetchData& m) { return PayloadWriter().Tok(m.token).U64(m.offset).Take(); }
std::string EncodeError(const ErrorReply& m) { return PayloadWriter().U16(m.code).String(m.message).Take(); }

Status DecodeBegin(std::string_view payload, BeginRequest* m) {
  return PayloadReader(payload, "BEGIN")
      .String("batch_id", &m->batch_id)
      .U64("total_size", &m->total_size)
      .U64("tail_hash", &m->tail_hash)
      .U32("flags", &m->flags)
      .Finish();
}
Status DecodeReady(std::string_view payload, ReadyReply* m) {
  return PayloadReader(payload, "READY")
      .Tok("token", &m->token)
      .U64("resume_offset", &m->resume_offset)
      .U32("chunk_size", &m->chunk_size)
      .U32("window", &m->window)
      .Finish();
}
Status DecodeChunk(std::string_view payload, ChunkRequest* m) {
  return PayloadReader(payload, "CHUNK").Tok("token", &m->token).U64("offset", &m->offset).Finish();
}
Status DecodeChunkAck(std::string_view payload, ChunkAck* m) {
  return PayloadReader(payload, "CHUNK_ACK").Tok("token", &m->token).U64("received_total", &m->received_total).Finish();
}
Status DecodeCommit(std::string_view payload, CommitRequest* m) {
  return PayloadReader(payload, "COMMIT").Tok("token", &m->token).U64("checksum", &m->checksum).Finish();
}
Status DecodeStatus(std::string_view payload, StatusRequest* m) {
  return PayloadReader(payload, "STATUS").Tok("token", &m->token).U32("hold_ms", &m->hold_ms).Finish();
}
Status DecodeStatusReply(std::string_view payload, StatusReply* m) {
  uint8_t state = 0;
  PayloadReader reader(payload, "STATUS reply");
  reader.U8("state", &state).U64("sequence", &m->sequence).U16("code", &m->code).String("message", &m->message);
  if (state > static_cast<uint8_t>(UploadState::kAlreadyMerged)) {
    reader.Fail("STATUS reply payload: unknown state " + std::to_string(state));
  }
  m->state = static_cast<UploadState>(state);
  return reader.Finish();
}
Status DecodeRead(std::string_view payload, ReadRequest* m) {
  *m = ReadRequest();
  uint8_t kind = 0;
  uint8_t format = 0;
  uint8_t flags = 0;
  PayloadReader reader(payload, "READ");
  reader.U8("kind", &kind);
  // The kind first: a request of an older version (a command line) is refused as such, not by a later field.
  if (reader.ok() && kind != static_cast<uint8_t>(ReadKind::kLookup) && kind != static_cast<uint8_t>(ReadKind::kQuery)) {
    return Status::Invalid("READ payload: unknown kind " + std::to_string(kind) + " (1 lookup, 2 query)");
  }
  reader.String("map", &m->map).U8("format", &format).U8("flags", &flags);
  if (!reader.ok()) return reader.Finish();
  m->kind = static_cast<ReadKind>(kind);
  const std::string name = ReadKindName(kind);
  if (m->map.empty() || m->map.size() > kMaxReadMapName) {
    return Status::Invalid("READ payload: map of " + std::to_string(m->map.size()) + " bytes (1 to " +
                           std::to_string(kMaxReadMapName) + ")");
  }
  const bool lookup = m->kind == ReadKind::kLookup;
  const auto is = [format](ReadFormat f) { return format == static_cast<uint8_t>(f); };
  const bool format_fits = is(ReadFormat::kJson) || is(ReadFormat::kCsv) ||
                           (lookup ? is(ReadFormat::kText) || is(ReadFormat::kWire) || is(ReadFormat::kAnswers)
                                  : is(ReadFormat::kTable));
  if (!format_fits) {
    return Status::Invalid("READ payload: format " + std::to_string(format) + " is not one a " + name +
                           (lookup ? " prints (1 text, 2 json, 3 csv, 4 wire, 6 answers)"
                                   : " prints (5 table, 2 json, 3 csv)"));
  }
  m->format = static_cast<ReadFormat>(format);
  const uint8_t known = lookup ? kLookupHasTime | kLookupQuiet : kQueryHasWhere | kQueryHasLimit | kQueryExplain;
  if ((flags & ~known) != 0) {
    return Status::Invalid("READ payload: unknown flags " + std::to_string(flags & ~known) + " for a " + name);
  }
  if (lookup) {
    m->quiet = (flags & kLookupQuiet) != 0;
    if ((flags & kLookupHasTime) != 0) {
      uint64_t time = 0;
      reader.U64("time_ms", &time);
      m->time_ms = static_cast<int64_t>(time);
    }
    uint32_t count = 0;
    reader.U32("key_count", &count);
    if (!reader.ok()) return reader.Finish();
    // Checked before reserving: a hostile count must not allocate.
    if (count == 0 || count > reader.remaining() / 4) {
      return Status::Invalid("READ payload: key_count " + std::to_string(count) + " is " +
                             (count == 0 ? std::string("no key") : "more than the " + std::to_string(reader.remaining()) +
                                                                       " remaining bytes can hold"));
    }
    m->keys.assign(count, std::string());
    for (uint32_t i = 0; i < count; ++i) reader.String(("keys[" + std::to_string(i) + "]").c_str(), &m->keys[i]);
    return reader.Finish();
  }
  m->explain = (flags & kQueryExplain) != 0;
  if ((flags & kQueryHasWhere) != 0) {
    std::string where;
    reader.String("where", &where);
    if (reader.ok() && where.size() > kMaxReadWhere) {
      return Status::Invalid("READ payload: where of " + std::to_string(where.size()) + " bytes (at most " +
                             std::to_string(kMaxReadWhere) + ")");
    }
    m->where = std::move(where);
  }
  if ((flags & kQueryHasLimit) != 0) {
    uint64_t limit = 0;
    reader.U64("limit", &limit);
    if (reader.ok() && limit == 0) return Status::Invalid("READ payload: limit 0 (a limit is above 0)");
    m->limit = limit;
  }
  return reader.Finish();
}
Status DecodeReadResult(std::string_view payload, ReadResult* m) {
  uint32_t exit_code = 0;
  PayloadReader reader(payload, "READ_RESULT");
  reader.U32("exit_code", &exit_code).String("out", &m->out).String("err", &m->err);
  m->exit_code = static_cast<int32_t>(exit_code);
  return reader.Finish();
}
Status DecodeSnapshot(std::string_view payload, SnapshotRequest* m) {
  return PayloadReader(payload, "SNAPSHOT")
      .String("map", &m->map)
      .U64("have_batches", &m->have_batches)
      .U64("have_digest", &m->have_digest)
      .Finish();
}
Status DecodeSnapshotSince(std::string_view payload, SnapshotSinceRequest* m) {
  uint8_t condensed = 0;
  uint64_t condensed_ms = 0;
  PayloadReader reader(payload, "SNAPSHOT_SINCE");
  reader.String("map", &m->map)
      .U64("have_batches", &m->have_batches)
      .U64("have_digest", &m->have_digest)
      .U8("condensed", &condensed)
      .U64("last_condensed_ms", &condensed_ms);
  if (reader.ok() && condensed > 1) {
    reader.Fail("SNAPSHOT_SINCE payload: condensed is " + std::to_string(condensed) + ", not 0 or 1");
  } else if (reader.ok() && condensed == 0 && condensed_ms != 0) {
    reader.Fail("SNAPSHOT_SINCE payload: last_condensed_ms is " + std::to_string(condensed_ms) +
                " where condensed is 0 (must be 0)");
  }
  m->last_condensed_ms.reset();
  if (condensed == 1) m->last_condensed_ms = static_cast<int64_t>(condensed_ms);
  return reader.Finish();
}
Status DecodeSnapshotOffer(std::string_view payload, SnapshotOffer* m) {
  uint64_t create_time = 0;
  PayloadReader reader(payload, "SNAPSHOT_OFFER");
  reader.U8("not_modified", &m->not_modified)
      .Tok("token", &m->token)
      .U64("total_size", &m->total_size)
      .U64("checksum", &m->checksum)
      .U64("batches", &m->batches)
      .U64("digest", &m->digest)
      .U64("create_time_ms", &create_time)
      .U32("chunk_size", &m->chunk_size);
  m->create_time_ms = static_cast<int64_t>(create_time);
  if (reader.ok() && m->not_modified > kOfferDiff) {
    return Status::Invalid("SNAPSHOT_OFFER payload: not_modified is " + std::to_string(m->not_modified) +
                           ", not 0, 1 or 2");
  }
  return reader.Finish();
}
Status DecodeFetch(std::string_view payload, FetchRequest* m) {
  return PayloadReader(payload, "FETCH")
      .Tok("token", &m->token)
      .U64("offset", &m->offset)
      .U32("length", &m->length)
      .Finish();
}
Status DecodeFetchData(std::string_view payload, FetchData* m) {
  return PayloadReader(payload, "FETCH_DATA").Tok("token", &m->token).U64("offset", &m->offset).Finish();
}
Status DecodeError(std::string_view payload, ErrorReply* m) {
  return PayloadReader(payload, "ERROR").U16("code", &m->code).String("message", &m->message).Finish();
}

const char* PrepareVerdictName(PrepareVerdict verdict) {
  switch (verdict) {
    case PrepareVerdict::kOk:
      return "ok";
    case PrepareVerdict::kUnknownMap:
      return "unknown map";
    case PrepareVerdict::kNoRoomInMap:
      return "no room in the map size";
    case PrepareVerdict::kNoDiskSpace:
      return "not enough disk";
    case PrepareVerdict::kShardUnusable:
      return "shard unusable";
    case PrepareVerdict::kHeldBack:
      return "held back behind a quarantined batch";
  }
  return "unknown verdict";
}

std::string EncodePrepare(const PrepareRequest& m) {
  PayloadWriter writer;
  writer.U32(static_cast<uint32_t>(m.maps.size()));
  for (const PrepareMap& map : m.maps) writer.String(map.map).U64(map.bytes);
  return writer.Take();
}
std::string EncodePrepareReply(const PrepareReply& m) {
  PayloadWriter writer;
  writer.U32(static_cast<uint32_t>(m.maps.size()));
  for (const PrepareMapReply& map : m.maps) {
    writer.String(map.map).U8(static_cast<uint8_t>(map.verdict)).U64(map.batches).U64(map.digest).String(map.message);
  }
  return writer.Take();
}

namespace {

// A count of entries, each at least `min_entry` bytes: refused before anything is allocated for them.
bool CheckPrepareCount(PayloadReader& reader, const char* command, uint32_t count, size_t min_entry) {
  if (!reader.ok()) return false;
  if (count > kMaxPrepareMaps || count > reader.remaining() / min_entry) {
    reader.Fail(std::string(command) + " payload: " + std::to_string(count) + " maps, more than " +
                (count > kMaxPrepareMaps ? std::to_string(kMaxPrepareMaps) + " allowed"
                                         : "the remaining " + std::to_string(reader.remaining()) + " bytes hold"));
    return false;
  }
  return true;
}

}  // namespace

Status DecodePrepare(std::string_view payload, PrepareRequest* m) {
  PayloadReader reader(payload, "PREPARE");
  uint32_t count = 0;
  reader.U32("count", &count);
  if (!CheckPrepareCount(reader, "PREPARE", count, 12)) return reader.Finish();
  m->maps.assign(count, PrepareMap{});
  for (PrepareMap& map : m->maps) reader.String("map", &map.map).U64("bytes", &map.bytes);
  return reader.Finish();
}
Status DecodePrepareReply(std::string_view payload, PrepareReply* m) {
  PayloadReader reader(payload, "PREPARE_REPLY");
  uint32_t count = 0;
  reader.U32("count", &count);
  if (!CheckPrepareCount(reader, "PREPARE_REPLY", count, 25)) return reader.Finish();
  m->maps.assign(count, PrepareMapReply{});
  for (PrepareMapReply& map : m->maps) {
    uint8_t verdict = 0;
    reader.String("map", &map.map).U8("verdict", &verdict).U64("batches", &map.batches).U64("digest", &map.digest);
    reader.String("message", &map.message);
    if (reader.ok() && verdict > static_cast<uint8_t>(PrepareVerdict::kHeldBack)) {
      reader.Fail("PREPARE_REPLY payload: unknown verdict " + std::to_string(verdict));
    }
    map.verdict = static_cast<PrepareVerdict>(verdict);
  }
  return reader.Finish();
}

std::string EncodeListMerged(const ListMergedRequest& m) {
  return PayloadWriter().String(m.map).String(m.after).U32(m.limit).Take();
}
std::string EncodeMergedList(const MergedList& m) {
  PayloadWriter writer;
  writer.U64(m.batches).U64(m.digest).U64(static_cast<uint64_t>(m.now_ms)).U8(m.more);
  writer.U32(static_cast<uint32_t>(m.ids.size()));
  for (const MergedBatch& id : m.ids) writer.String(id.id).U64(static_cast<uint64_t>(id.merged_ms)).U8(id.retained);
  return writer.Take();
}
std::string EncodeOfferBatch(const OfferBatchRequest& m) { return PayloadWriter().String(m.batch_id).Take(); }

Status DecodeListMerged(std::string_view payload, ListMergedRequest* m) {
  PayloadReader reader(payload, "LIST_MERGED");
  reader.String("map", &m->map).String("after", &m->after).U32("limit", &m->limit);
  if (reader.ok() && !m->after.empty() && !IsWireBatchId(m->after)) {
    reader.Fail("LIST_MERGED payload: field after is not a batch id (1 to 255 bytes of A-Z a-z 0-9 . _ - : /)");
  }
  if (reader.ok() && (m->limit == 0 || m->limit > kMaxListedBatches)) {
    reader.Fail("LIST_MERGED payload: limit " + std::to_string(m->limit) + " is not 1 to " +
                std::to_string(kMaxListedBatches));
  }
  return reader.Finish();
}
Status DecodeMergedList(std::string_view payload, MergedList* m) {
  PayloadReader reader(payload, "MERGED_LIST");
  uint64_t now = 0;
  uint32_t count = 0;
  reader.U64("batches", &m->batches).U64("digest", &m->digest).U64("now_ms", &now).U8("more", &m->more);
  reader.U32("count", &count);
  m->now_ms = static_cast<int64_t>(now);
  if (reader.ok() && m->more > 1) reader.Fail("MERGED_LIST payload: more is " + std::to_string(m->more) + ", not 0 or 1");
  constexpr size_t kMinEntry = 4 + 1 + 8 + 1;  // an id of at least one byte, the time, the flag
  if (reader.ok() && (count > kMaxListedBatches || count > reader.remaining() / kMinEntry)) {
    reader.Fail("MERGED_LIST payload: " + std::to_string(count) + " ids, more than " +
                (count > kMaxListedBatches ? std::to_string(kMaxListedBatches) + " allowed"
                                           : "the remaining " + std::to_string(reader.remaining()) + " bytes hold"));
  }
  if (!reader.ok()) return reader.Finish();
  m->ids.assign(count, MergedBatch{});
  for (MergedBatch& id : m->ids) {
    uint64_t merged = 0;
    reader.String("id", &id.id).U64("merged_ms", &merged).U8("retained", &id.retained);
    id.merged_ms = static_cast<int64_t>(merged);
    if (reader.ok() && !IsWireBatchId(id.id)) reader.Fail("MERGED_LIST payload: an id that is not a batch id");
    if (reader.ok() && id.retained > 1) {
      reader.Fail("MERGED_LIST payload: retained is " + std::to_string(id.retained) + ", not 0 or 1");
    }
  }
  return reader.Finish();
}
Status DecodeOfferBatch(std::string_view payload, OfferBatchRequest* m) {
  PayloadReader reader(payload, "OFFER_BATCH");
  reader.String("batch_id", &m->batch_id);
  if (reader.ok() && !IsWireBatchId(m->batch_id)) {
    reader.Fail("OFFER_BATCH payload: batch_id is not a batch id (1 to 255 bytes of A-Z a-z 0-9 . _ - : /)");
  }
  return reader.Finish();
}

Code CodeFromWire(uint16_t code) {
  if (code > static_cast<uint16_t>(Code::kPermissionDenied)) return Code::kInternal;
  return static_cast<Code>(code);
}

bool IsWireBatchId(std::string_view id) {
  if (id.empty() || id.size() > kMaxWireBatchId) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == ':' || c == '/';
    if (!ok) return false;
  }
  return true;
}

}  // namespace planb::protocol
