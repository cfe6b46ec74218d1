#include "support/snapshot_fixture.h"

#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <zmq_addon.hpp>

#include "host/common/file_util.h"
#include "host/ingest/merge_processor.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb::testing {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> NumberedRows(int first, int count) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (int i = first; i < first + count; ++i) {
    const std::string seed = std::to_string(i * 7919);
    rows.emplace_back("key-" + std::to_string(i), std::to_string(XXH3_64bits(seed.data(), seed.size())));
  }
  return rows;
}

Status MakeShard(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& rows,
                 std::string* shard, ContentVersion* version) {
  std::unique_ptr<Runtime> runtime;
  PLANB_RETURN_IF_ERROR(OpenTestRuntime(dir, StateMapSection("m", "hashed"), &runtime));
  PLANB_RETURN_IF_ERROR(StageRows(*runtime, "m", rows));
  MergeReport report;
  PLANB_RETURN_IF_ERROR(MergeProcessor(*runtime).MergePending(&report));
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(runtime->OpenShard("m", &env));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env->env(), MDB_RDONLY));
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), env->meta(), version));
  *shard = runtime->home().ShardPath("m");
  return Status::Ok();
}

std::string InstallSnapshot(const std::string& home, const std::string& map, int64_t create_time_ms,
                            const std::string& shard) {
  const std::string dir = home + "/snapshots/" + map + "/" + std::to_string(create_time_ms);
  fs::create_directories(dir);
  fs::copy_file(shard + "/data.mdb", dir + "/data.mdb", fs::copy_options::overwrite_existing);
  return dir;
}

std::vector<std::string> SnapshotEntries(const std::string& home, const std::string& map) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(home + "/snapshots/" + map, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> CompleteSnapshots(const std::string& home, const std::string& map) {
  std::vector<std::string> names;
  for (const std::string& name : SnapshotEntries(home, map)) {
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) names.push_back(name);
  }
  return names;
}

std::string MakeSnapshotZip(const std::string& dir, const std::string& map, const std::string& data_mdb) {
  static std::atomic<int> counter{0};
  const std::string n = std::to_string(++counter);
  const std::string batch = dir + "/zip-src-" + n;
  fs::create_directories(batch + "/" + map);
  fs::copy_file(data_mdb, batch + "/" + map + "/data.mdb");
  const std::string zip = dir + "/snapshot-" + n + ".zip";
  const Status s = ZipBatch(batch, zip, ZipOptions{/*compress=*/true, /*batch_id=*/"snapshot/" + n});
  if (!s.ok()) return "";
  fs::remove_all(batch);
  return zip;
}

std::string ReaderConfig(const std::vector<std::string>& endpoints, const std::string& extra,
                         const std::string& maps) {
  std::string text = "node_name = reader\nnode_list = ";
  for (size_t i = 0; i < endpoints.size(); ++i) text += ",node" + std::to_string(i + 1);
  text += "\n";
  if (extra.find("request_timeout") == std::string::npos) text += "request_timeout = 300ms\n";
  text += extra;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    text += "[node.node" + std::to_string(i + 1) + "]\nendpoint = " + endpoints[i] + "\n";
  }
  return text + (maps.empty() ? StateMapSection("m", "hashed") : maps);
}

std::string ExampleMapSections() {
  const std::string config = ReadFile(std::string(PLANB_SOURCE_DIR) + "/examples/planb.ini");
  const size_t first = config.find("\n[map.");
  return first == std::string::npos ? "" : config.substr(first + 1);
}

ScriptedNode::ScriptedNode(zmq::context_t& context, Script script)
    : script_(std::move(script)), socket_(context, zmq::socket_type::router) {
  if (script_.offer.token == Token{}) script_.offer.token = Token{0, 42};
  if (script_.offer.chunk_size == 0) script_.offer.chunk_size = 1000;
  if (script_.fill_offer) {
    script_.offer.total_size = script_.zip.size();
    script_.offer.checksum = XXH3_64bits(script_.zip.data(), script_.zip.size());
  }
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("tcp://127.0.0.1:*");
  endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  thread_ = std::thread([this] { Run(); });
}

ScriptedNode::~ScriptedNode() {
  stop_ = true;
  thread_.join();
}

void ScriptedNode::Run() {
  while (!stop_) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    // The timeout only bounds how late the destructor's stop is noticed.
    zmq::poll(&item, 1, std::chrono::milliseconds(20));
    if ((item.revents & ZMQ_POLLIN) == 0) continue;
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait)) continue;
    Answer(frames);
  }
}

void ScriptedNode::Send(const std::string& routing_id, protocol::Command command, uint64_t request_id,
                        const std::string& payload, const std::string* data) {
  const std::string header = protocol::EncodeHeader(command, request_id);
  socket_.send(zmq::buffer(routing_id), zmq::send_flags::sndmore);
  socket_.send(zmq::buffer(header), zmq::send_flags::sndmore);
  if (data == nullptr) {
    socket_.send(zmq::buffer(payload), zmq::send_flags::none);
    return;
  }
  socket_.send(zmq::buffer(payload), zmq::send_flags::sndmore);
  socket_.send(zmq::buffer(*data), zmq::send_flags::none);
}

void ScriptedNode::Answer(const std::vector<zmq::message_t>& frames) {
  if (frames.size() < 3) return;
  const std::string routing_id = frames[0].to_string();
  protocol::Header header;
  if (!protocol::DecodeHeader(frames[1].to_string_view(), &header).ok()) return;
  const std::string_view payload = frames[2].to_string_view();
  if (header.command == static_cast<uint16_t>(protocol::Command::kSnapshot)) {
    ++snapshots_;
    if (script_.snapshot_error) {
      return Send(routing_id, protocol::Command::kError, header.request_id,
                  protocol::EncodeError(*script_.snapshot_error), nullptr);
    }
    return Send(routing_id, protocol::Command::kSnapshotOffer, header.request_id,
                protocol::EncodeSnapshotOffer(script_.offer), nullptr);
  }
  if (header.command == static_cast<uint16_t>(protocol::Command::kSnapshotSince)) {
    // As a node that predates SNAPSHOT_SINCE answers it: the requester asks SNAPSHOT next.
    ++since_requests_;
    const protocol::ErrorReply unknown{static_cast<uint16_t>(Code::kNotSupported),
                                       "unknown command 0x000b (this node takes BEGIN, CHUNK, COMMIT, STATUS, READ, "
                                       "SNAPSHOT, FETCH, PREPARE, LIST_MERGED and OFFER_BATCH)"};
    return Send(routing_id, protocol::Command::kError, header.request_id, protocol::EncodeError(unknown), nullptr);
  }
  if (header.command != static_cast<uint16_t>(protocol::Command::kFetch)) return;
  ++fetches_;
  protocol::FetchRequest fetch;
  if (!protocol::DecodeFetch(payload, &fetch).ok()) return;
  if (script_.fetch_error) {
    if (const std::optional<protocol::ErrorReply> error = script_.fetch_error(fetch)) {
      return Send(routing_id, protocol::Command::kError, header.request_id, protocol::EncodeError(*error), nullptr);
    }
  }
  protocol::FetchData data{fetch.token, fetch.offset};
  std::string bytes =
      fetch.offset >= script_.zip.size() ? std::string() : script_.zip.substr(fetch.offset, fetch.length);
  if (script_.tamper && !script_.tamper(fetch, &data, &bytes)) return;
  const std::string encoded = protocol::EncodeFetchData(data);
  if (script_.reorder && !held_ && fetch.offset + fetch.length < script_.zip.size()) {
    held_ = Held{routing_id, header.request_id, encoded, bytes};
    return;
  }
  Send(routing_id, protocol::Command::kFetchData, header.request_id, encoded, &bytes);
  if (held_) {
    Send(held_->routing_id, protocol::Command::kFetchData, held_->request_id, held_->payload, &held_->data);
    held_.reset();
  }
}

}  // namespace planb::testing
