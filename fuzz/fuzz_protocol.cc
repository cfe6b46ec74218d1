// Every wire-protocol decoder a node or client runs on bytes from a peer (host/transfer/protocol.h, the READ
// request as a node turns it into a lookup or query request, `lookup --format wire` answers, the Reader's remote
// answers, delete entries). The first
// byte picks the decoder, the rest is the frame. Decoders are strict, so whatever one accepts must encode back
// to the very same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "host/commands/lookup_answers.h"
#include "host/commands/lookup_wire.h"
#include "host/commands/remote_read_request.h"
#include "host/transfer/delete_entry.h"
#include "host/transfer/protocol.h"

namespace {

using planb::Status;
namespace p = planb::protocol;

// Decodes `in` as T and, when accepted, checks that encoding it again gives `in` back.
template <typename T>
void RoundTrip(std::string_view in, Status (*decode)(std::string_view, T*), std::string (*encode)(const T&),
               const char* name) {
  T m;
  if (!decode(in, &m).ok()) return;
  planb::fuzz::Check(encode(m) == in, std::string(name) + ": an accepted payload does not encode back to itself");
}

void Read(std::string_view in) {
  p::ReadRequest m;
  if (!p::DecodeRead(in, &m).ok()) return;
  planb::fuzz::Check(p::EncodeRead(m) == in, "READ: an accepted payload does not encode back to itself");
  // What the node does next with an accepted READ (StorageNode::ExecuteRead): the read commands' own request,
  // which must carry every field as decoded.
  if (m.kind == p::ReadKind::kLookup) {
    const planb::LookupRequest lookup = planb::LookupRequestFrom(m);
    planb::fuzz::Check(lookup.map == m.map && lookup.keys == m.keys && lookup.time_ms == m.time_ms &&
                           lookup.quiet == m.quiet && planb::ReadFormatOf(lookup.format) == m.format,
                       "READ: a lookup's request differs from the READ decoded");
  } else {
    const planb::QueryRequest query = planb::QueryRequestFrom(m);
    planb::fuzz::Check(query.map == m.map && query.where == m.where && query.limit == m.limit &&
                           query.explain == m.explain && planb::ReadFormatOf(query.format) == m.format,
                       "READ: a query's request differs from the READ decoded");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 24) {
    case 0: {
      p::Header h;
      if (p::DecodeHeader(in, &h).ok() && h.version == p::kProtocolVersion && in.size() == p::kHeaderSize) {
        planb::fuzz::Check(p::EncodeHeader(static_cast<p::Command>(h.command), h.request_id) == in,
                           "header: an accepted frame does not encode back to itself");
      }
      (void)p::CommandName(h.command);
      break;
    }
    case 1: RoundTrip<p::BeginRequest>(in, p::DecodeBegin, p::EncodeBegin, "BEGIN"); break;
    case 2: RoundTrip<p::ReadyReply>(in, p::DecodeReady, p::EncodeReady, "READY"); break;
    case 3: RoundTrip<p::ChunkRequest>(in, p::DecodeChunk, p::EncodeChunk, "CHUNK"); break;
    case 4: RoundTrip<p::ChunkAck>(in, p::DecodeChunkAck, p::EncodeChunkAck, "CHUNK_ACK"); break;
    case 5: RoundTrip<p::CommitRequest>(in, p::DecodeCommit, p::EncodeCommit, "COMMIT"); break;
    case 6: RoundTrip<p::StatusRequest>(in, p::DecodeStatus, p::EncodeStatus, "STATUS"); break;
    case 7: RoundTrip<p::StatusReply>(in, p::DecodeStatusReply, p::EncodeStatusReply, "STATUS_REPLY"); break;
    case 8: Read(in); break;
    case 9: RoundTrip<p::ReadResult>(in, p::DecodeReadResult, p::EncodeReadResult, "READ_RESULT"); break;
    case 10: RoundTrip<p::SnapshotRequest>(in, p::DecodeSnapshot, p::EncodeSnapshot, "SNAPSHOT"); break;
    case 11: RoundTrip<p::SnapshotOffer>(in, p::DecodeSnapshotOffer, p::EncodeSnapshotOffer, "SNAPSHOT_OFFER"); break;
    case 12: RoundTrip<p::FetchRequest>(in, p::DecodeFetch, p::EncodeFetch, "FETCH"); break;
    case 13: RoundTrip<p::FetchData>(in, p::DecodeFetchData, p::EncodeFetchData, "FETCH_DATA"); break;
    case 14: RoundTrip<p::PrepareRequest>(in, p::DecodePrepare, p::EncodePrepare, "PREPARE"); break;
    case 15: RoundTrip<p::PrepareReply>(in, p::DecodePrepareReply, p::EncodePrepareReply, "PREPARE_REPLY"); break;
    case 16: RoundTrip<p::ErrorReply>(in, p::DecodeError, p::EncodeError, "ERROR"); break;
    case 17: {  // a lookup's wire answers; the byte after the selector is how many keys were asked
      if (in.empty()) break;
      planb::WireAnswers answers;
      (void)planb::DecodeLookupWire(in.substr(1), static_cast<uint8_t>(in[0]), &answers);
      break;
    }
    case 19: {  // the Reader's remote answers (READ format 6); the byte after the selector is how many keys
      if (in.empty()) break;
      planb::LookupAnswers answers;
      (void)planb::DecodeLookupAnswers(in.substr(1), static_cast<uint8_t>(in[0]), &answers);
      break;
    }
    case 18: {
      planb::DeleteEntry entry;
      if (planb::ParseDeleteEntry(in, &entry).ok()) {
        planb::fuzz::Check(planb::DeleteEntryText(entry) == in, "delete entry: accepted text does not print back");
      }
      break;
    }
    case 20: RoundTrip<p::ListMergedRequest>(in, p::DecodeListMerged, p::EncodeListMerged, "LIST_MERGED"); break;
    case 21: RoundTrip<p::MergedList>(in, p::DecodeMergedList, p::EncodeMergedList, "MERGED_LIST"); break;
    case 22: RoundTrip<p::OfferBatchRequest>(in, p::DecodeOfferBatch, p::EncodeOfferBatch, "OFFER_BATCH"); break;
    case 23:
      RoundTrip<p::SnapshotSinceRequest>(in, p::DecodeSnapshotSince, p::EncodeSnapshotSince, "SNAPSHOT_SINCE");
      break;
    default: {
      (void)p::IsWireBatchId(in);
      (void)p::IsRequest(static_cast<uint16_t>(in.size()));
      break;
    }
  }
  return 0;
}
