// The upload wire protocol between a sender (DEALER) and a storage node (ROUTER): message layout, commands and
// their payloads, with an encoder and a strict decoder for each (docs/protocol.md is the reference).
//
// Wire format v4 (bump kProtocolVersion on any change; v2: tokens are 128 bits; v3: READ is typed, and catch-up's
// LIST_MERGED and OFFER_BATCH, added before any release of 3; v4: the zip's checksum goes with COMMIT, not BEGIN,
// so a sender hashes the chunks as it sends them instead of reading the zip once more first): every message
// is multipart.
//   frame A  header, 16 bytes: "PLNB", u16 version, u16 command, u64 request id
//   frame B  payload: the command's fields in order; integers big-endian (planb/encoding.h), strings as
//            u32 length + bytes
//   frame C  CHUNK only: the chunk's bytes
// A reply carries the request id of the request it answers.
// Decoders never trust a length: every error names the command and the field that did not fit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/transfer/token.h"
#include "planb/status.h"

namespace planb::protocol {

inline constexpr char kMagic[4] = {'P', 'L', 'N', 'B'};
inline constexpr uint16_t kProtocolVersion = 4;
inline constexpr size_t kHeaderSize = 16;

// Requests have the high bit clear; replies set it.
enum class Command : uint16_t {
  kBegin = 0x0001,
  kChunk = 0x0002,
  kCommit = 0x0003,
  kStatus = 0x0004,
  kRead = 0x0005,
  kSnapshot = 0x0006,
  kFetch = 0x0007,
  kPrepare = 0x0008,
  kListMerged = 0x0009,
  kOfferBatch = 0x000A,
  kSnapshotSince = 0x000B,
  kReady = 0x8001,
  kChunkAck = 0x8002,
  kStatusReply = 0x8004,
  kReadResult = 0x8005,
  kSnapshotOffer = 0x8006,
  kFetchData = 0x8007,
  kPrepareReply = 0x8008,
  kMergedList = 0x8009,
  kError = 0x80FF,
};

// "BEGIN", "CHUNK_ACK", ... ; "command 0x1234" for values that are none of these.
std::string CommandName(uint16_t command);
bool IsRequest(uint16_t command);

struct Header {
  uint16_t version = kProtocolVersion;
  uint16_t command = 0;
  uint64_t request_id = 0;
};

std::string EncodeHeader(Command command, uint64_t request_id);
// Checks the frame's size and magic and fills `header`. The version is read but not checked (the caller answers
// an unknown version with its own error); on a short frame or bad magic `header` keeps what could be read, so
// an error reply can still carry the request id when there is one.
Status DecodeHeader(std::string_view frame, Header* header);

// Upload states as STATUS replies report them (on the wire: u8).
enum class UploadState : uint8_t {
  kReceiving = 0,    // chunks are arriving
  kVerifying = 1,    // committed: size and checksum matched, the node is verifying the batch
  kStaged = 2,       // verified and staged; `sequence` is its staging number
  kMerged = 3,       // staged and merged (reported only when the sender asked to synchronise the merge)
  kFailed = 4,       // refused; code + message say why, the node keeps nothing
  kMergeFailed = 5,  // staged, but its merge failed (it stays queued and is retried); code + message say why
  // The node had merged a batch of this id into the shard of every map the batch names: nothing was staged (a
  // retried load sending what the node already has); the batch is in. `message` names the batch id merged.
  kAlreadyMerged = 6,
};
const char* UploadStateName(UploadState state);

inline constexpr uint32_t kFlagSynchroniseMerge = 1u << 0;
// The largest chunk size a node may advertise: a sender refuses a READY with a chunk size of 0 or above this as
// a protocol error (each chunk is one zmq message in memory, a window of them at once).
inline constexpr uint32_t kMaxUploadChunkSize = 16u << 20;

// A batch id as BEGIN may carry it: 1 to kMaxWireBatchId bytes of A-Z a-z 0-9 . _ - : / (ids are
// "<node>/<stream>", node names are letters, digits, '.', '-', '_'). Anything else is refused at the edge.
inline constexpr size_t kMaxWireBatchId = 255;
bool IsWireBatchId(std::string_view id);

// The zip's tail: its last kTailBytes (all of a smaller zip), where a zip keeps its central directory (each entry's
// name, CRC-32 and sizes). BEGIN identifies the zip by its hash, so that a retry resumes or rejoins its upload
// without the sender reading the whole zip first; COMMIT's checksum covers every byte.
inline constexpr uint64_t kTailBytes = 64 * 1024;
struct BeginRequest {
  std::string batch_id;
  uint64_t total_size = 0;
  uint64_t tail_hash = 0;  // XXH3-64 of the zip's tail (since version 4; the whole zip's checksum before)
  uint32_t flags = 0;      // kFlagSynchroniseMerge; unknown bits are ignored
};
struct ReadyReply {
  Token token;
  uint64_t resume_offset = 0;  // bytes the node already holds: send from here
  uint32_t chunk_size = 0;     // the largest chunk the node accepts
  uint32_t window = 0;         // chunks the sender may have unacknowledged
};
struct ChunkRequest {  // frame C holds the bytes
  Token token;
  uint64_t offset = 0;
};
struct ChunkAck {
  Token token;
  uint64_t received_total = 0;  // contiguous bytes the node holds
};
struct CommitRequest {
  Token token;
  uint64_t checksum = 0;  // XXH3-64 of the whole zip, as the sender read it (since version 4; BEGIN had it before)
};
struct StatusRequest {
  Token token;
  uint32_t hold_ms = 0;  // the longest the sender waits for this reply; the node holds at most this long
};
struct StatusReply {
  UploadState state = UploadState::kReceiving;
  uint64_t sequence = 0;  // staged, merged, merge failed: the staging sequence
  uint16_t code = 0;      // failed, merge failed: a planb::Code
  std::string message;    // failed, merge failed: why
};
// READ (typed since version 3): a lookup or a query of one map, run on the node by the same functions the CLI
// runs (host/commands/read_requests.h). Every field is bounded by the decoder; fields of the other kind are not
// on the wire.
enum class ReadKind : uint8_t { kLookup = 1, kQuery = 2 };
// The output format asked for. Lookups: text, json, csv, wire (what lookup --remote uses), answers (what the
// Reader's remote mode uses: host/commands/lookup_answers.h); queries: table, json, csv.
enum class ReadFormat : uint8_t { kText = 1, kJson = 2, kCsv = 3, kWire = 4, kTable = 5, kAnswers = 6 };
// "lookup", "query"; "read kind N" for other values.
std::string ReadKindName(uint8_t kind);
inline constexpr size_t kMaxReadMapName = 255;        // bytes; the node's catalog says whether the map exists
inline constexpr size_t kMaxReadWhere = size_t{64} << 10;  // bytes of a query's where expression
struct ReadRequest {
  ReadKind kind = ReadKind::kLookup;
  std::string map;                    // 1..kMaxReadMapName bytes
  ReadFormat format = ReadFormat::kWire;
  // lookup
  std::vector<std::string> keys;      // at least one
  std::optional<int64_t> time_ms;     // the instant asked about (ms since the epoch); none: the node's now
  bool quiet = false;                 // absent keys are not named on stderr
  // query
  std::optional<std::string> where;   // the filter expression (docs/query.md), parsed by the node
  std::optional<uint64_t> limit;      // rows, above 0
  bool explain = false;               // the scan's statistics on stderr
};
struct ReadResult {
  int32_t exit_code = 0;  // the command's exit status on the node
  std::string out;        // its stdout, byte for byte
  std::string err;        // its stderr, byte for byte
};
// The largest READ payload a node takes (it answers ERROR kInvalidArgument "request too large (N bytes, limit M)";
// far larger frames zmq drops at the node's maxmsgsize). Clients split a lookup's keys into requests under it.
inline constexpr size_t kMaxReadRequest = size_t{1} << 20;
// The most stdout a READ_RESULT carries; a command printing more gets exit 2 and kReadOutputTooLarge instead.
inline constexpr size_t kMaxReadOutput = size_t{64} << 20;
inline constexpr char kReadOutputTooLarge[] = "planb: query output exceeds 64 MiB; narrow it with --where or --limit\n";

// SNAPSHOT: the requester holds a snapshot of `map` at `have_*` (zeros: none) and asks for a newer one. The node
// answers SNAPSHOT_OFFER: not_modified (its shard is at the requester's version: a success), or a token for a zip
// of a consistent copy of the shard (a batch zip, batch_zip.h, holding the one map), fetched with FETCH.
// ERROR kNotFound: the map is unknown to the node or nothing has been merged into it yet (the message says which).
struct SnapshotRequest {
  std::string map;
  uint64_t have_batches = 0;  // ContentVersion of the requester's snapshot
  uint64_t have_digest = 0;
};
// SNAPSHOT_SINCE: SNAPSHOT, and the requester can take a diff: the batches merged since its snapshot, which it
// merges into a copy of that snapshot itself (host/snapshot/snapshot_diff_apply.h). `last_condensed_ms` is its
// snapshot's maintenance mark (maintenance_marks.h): maintenance changes rows without changing the version, so
// a diff is offered only when the node's shard has the same mark. The node answers SNAPSHOT_OFFER with
// not_modified 2 (a diff: the zip holds batch zips, host/transfer/diff_zip.h; batches and digest are the version
// after them) when it can, else as it answers SNAPSHOT. A node that predates it answers ERROR kNotSupported.
struct SnapshotSinceRequest {
  std::string map;
  uint64_t have_batches = 0;
  uint64_t have_digest = 0;
  std::optional<int64_t> last_condensed_ms;  // on the wire: u8 1 and the i64, or u8 0 and 0
};
inline constexpr uint8_t kOfferWhole = 0;
inline constexpr uint8_t kOfferNotModified = 1;
inline constexpr uint8_t kOfferDiff = 2;  // only in answer to SNAPSHOT_SINCE
struct SnapshotOffer {
  // kOfferNotModified: the requester's snapshot is current; the fields below other than version are 0.
  // kOfferDiff: the zip is a diff (SNAPSHOT_SINCE); else (kOfferWhole) a copy of the shard.
  uint8_t not_modified = 0;
  Token token;
  uint64_t total_size = 0;   // bytes of the zip
  uint64_t checksum = 0;     // XXH3-64 of the whole zip
  uint64_t batches = 0;      // ContentVersion of the copy (read from the copy itself)
  uint64_t digest = 0;
  int64_t create_time_ms = 0;  // when the node made the copy (its clock)
  uint32_t chunk_size = 0;     // the largest FETCH length the node serves (1..kMaxUploadChunkSize)
};
// FETCH: `length` bytes of the offer's zip from `offset` (length 1..the offer's chunk_size). FETCH_DATA carries
// them in frame C: exactly `length` bytes, fewer only at the end of the zip. ERROR kNotFound for a token the node
// no longer knows (expired after idling, or the node restarted): ask SNAPSHOT again.
struct FetchRequest {
  Token token;
  uint64_t offset = 0;
  uint32_t length = 0;
};
struct FetchData {  // frame C holds the bytes
  Token token;
  uint64_t offset = 0;
};

// PREPARE: before a load stages anything, the sender asks each node whether it can take the load's batches:
// per map, whether it knows the map and has room for `bytes` more (the unzipped size of the map's LMDB files in
// all the load's batches). PREPARE_REPLY answers every map, in the request's order, with a verdict and the
// map's content version now (zeros: nothing merged yet). Nothing is reserved: it is a check, not a promise.
enum class PrepareVerdict : uint8_t {
  kOk = 0,
  kUnknownMap = 1,       // the node's config has no such map
  kNoRoomInMap = 2,      // the shard's used size plus `bytes` exceeds the map's max_store_size
  kNoDiskSpace = 3,      // the node's disk has not room for the batches (and their merge scratch)
  kShardUnusable = 4,    // the shard does not open (the message says why)
  // The map is held back behind a quarantined batch (quarantine.h): a batch of it would stay staged, unmerged,
  // until an operator releases that batch (the message names both and how). Added without a version bump: a
  // sender that predates it fails to decode the reply and counts the node as not answering.
  kHeldBack = 5,
};
const char* PrepareVerdictName(PrepareVerdict verdict);
inline constexpr size_t kMaxPrepareMaps = 4096;  // maps in one PREPARE (a decoder refuses more)
struct PrepareMap {
  std::string map;
  uint64_t bytes = 0;
};
struct PrepareRequest {
  std::vector<PrepareMap> maps;
};
struct PrepareMapReply {
  std::string map;
  PrepareVerdict verdict = PrepareVerdict::kOk;
  uint64_t batches = 0;  // the map's ContentVersion on the node now
  uint64_t digest = 0;
  std::string message;   // not ok: why, naming the map and the sizes
};
struct PrepareReply {
  std::vector<PrepareMapReply> maps;
};
std::string EncodePrepare(const PrepareRequest& m);
std::string EncodePrepareReply(const PrepareReply& m);
// Both refuse a count above kMaxPrepareMaps or above what the remaining bytes could hold; the reply also refuses
// an unknown verdict.
Status DecodePrepare(std::string_view payload, PrepareRequest* m);
Status DecodePrepareReply(std::string_view payload, PrepareReply* m);

// Catch-up between storage nodes (right "node": the peers of node_list). LIST_MERGED asks a peer which batches it
// has merged into `map`, in batch id order after `after` ("" = from the first), at most `limit` of them (1..
// kMaxListedBatches). MERGED_LIST answers with the map's content version, the peer's clock, the ids with when they
// were merged and whether the peer still retains the zip, and `more` when ids after the last one remain.
// ERROR kNotFound: no such map on the peer. A map without a shard answers an empty list.
inline constexpr uint32_t kMaxListedBatches = 4096;
struct ListMergedRequest {
  std::string map;
  std::string after;  // "" or a wire batch id
  uint32_t limit = kMaxListedBatches;
};
struct MergedBatch {
  std::string id;          // a wire batch id
  int64_t merged_ms = 0;   // when the peer merged it (its clock)
  uint8_t retained = 0;    // 1: OFFER_BATCH can fetch it from the peer
};
struct MergedList {
  uint64_t batches = 0;  // the map's ContentVersion on the peer
  uint64_t digest = 0;
  int64_t now_ms = 0;    // the peer's clock when it answered
  uint8_t more = 0;      // 1: ids after the last one listed remain
  std::vector<MergedBatch> ids;
};
// OFFER_BATCH: the zip of a batch the peer merged and retains, offered like a snapshot: SNAPSHOT_OFFER with a
// token for FETCH (not_modified 0, batches and digest 0, create_time_ms when the peer merged it). ERROR kNotFound
// when the peer does not retain it.
struct OfferBatchRequest {
  std::string batch_id;  // a wire batch id
};

struct ErrorReply {
  uint16_t code = 0;  // a planb::Code
  std::string message;
};

std::string EncodeBegin(const BeginRequest& m);
std::string EncodeReady(const ReadyReply& m);
std::string EncodeChunk(const ChunkRequest& m);
std::string EncodeChunkAck(const ChunkAck& m);
std::string EncodeCommit(const CommitRequest& m);
std::string EncodeStatus(const StatusRequest& m);
std::string EncodeStatusReply(const StatusReply& m);
std::string EncodeRead(const ReadRequest& m);
std::string EncodeReadResult(const ReadResult& m);
std::string EncodeSnapshot(const SnapshotRequest& m);
std::string EncodeSnapshotSince(const SnapshotSinceRequest& m);
std::string EncodeSnapshotOffer(const SnapshotOffer& m);
std::string EncodeFetch(const FetchRequest& m);
std::string EncodeFetchData(const FetchData& m);
std::string EncodeError(const ErrorReply& m);

// Each decoder takes frame B and refuses, with kInvalidArgument naming the command and field, a payload that
// ends inside a field, a string longer than what remains, bytes after the last field and (STATUS reply) an
// unknown state.
Status DecodeBegin(std::string_view payload, BeginRequest* m);
Status DecodeReady(std::string_view payload, ReadyReply* m);
Status DecodeChunk(std::string_view payload, ChunkRequest* m);
Status DecodeChunkAck(std::string_view payload, ChunkAck* m);
Status DecodeCommit(std::string_view payload, CommitRequest* m);
Status DecodeStatus(std::string_view payload, StatusRequest* m);
Status DecodeStatusReply(std::string_view payload, StatusReply* m);
// READ also refuses an unknown kind, flag bit or format (or one the kind does not print), an empty or over-long
// map, a lookup without keys or with a key count larger than the remaining bytes could hold (each key needs at
// least 4), a where over kMaxReadWhere bytes and a limit of 0, naming the field.
Status DecodeRead(std::string_view payload, ReadRequest* m);
Status DecodeReadResult(std::string_view payload, ReadResult* m);
// SNAPSHOT_OFFER also refuses not_modified other than 0 or 1.
Status DecodeSnapshot(std::string_view payload, SnapshotRequest* m);
Status DecodeSnapshotSince(std::string_view payload, SnapshotSinceRequest* m);
Status DecodeSnapshotOffer(std::string_view payload, SnapshotOffer* m);
Status DecodeFetch(std::string_view payload, FetchRequest* m);
Status DecodeFetchData(std::string_view payload, FetchData* m);
Status DecodeError(std::string_view payload, ErrorReply* m);
// These also refuse an id that is not a wire batch id, a limit of 0 or above kMaxListedBatches, a count above that
// or above what the remaining bytes could hold, and a flag other than 0 or 1, naming the field.
std::string EncodeListMerged(const ListMergedRequest& m);
std::string EncodeMergedList(const MergedList& m);
std::string EncodeOfferBatch(const OfferBatchRequest& m);
Status DecodeListMerged(std::string_view payload, ListMergedRequest* m);
Status DecodeMergedList(std::string_view payload, MergedList* m);
Status DecodeOfferBatch(std::string_view payload, OfferBatchRequest* m);

// A planb::Code from the wire; values this build does not know become kInternal.
Code CodeFromWire(uint16_t code);

}  // namespace planb::protocol
