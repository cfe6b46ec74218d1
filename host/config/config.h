// The planb configuration file (INI, read exactly by host/config/ini_reader.h) and its validation.
//
//   home = /var/lib/planb            # optional; --home overrides it; default planb-home beside this file
//   plugin_dir = /opt/planb/plugins  # repeatable; default: the plugins installed or built with planb
//   [map.city_to_country]
//   type = state                     # a store-type plugin name
//   scheme = hashed                  # a key-scheme plugin name (default hashed, for types with a text key)
//   max_store_size = 10GiB           # LMDB map size
//   max_readers = 126
//   synchronise_merge = false        # loads wait until every storage node has merged (not just staged)
//   condense = false                 # temporal types and sessions: collapse repeats (docs/maintenance.md)
//   condense_after = 0s              # ... only of rows whose effective time (sessions: end) is older than this
//   retain_for =                     # delete rows whose effective time is older than this; empty: keep forever
//   reclaim_free_share = 0.5         # rewrite a shard compactly when free pages pass this share of its file
//   hash_bits = 64                   # any other key is a plugin option, checked against the plugins later
//
// Maintenance (planb maintain, and planb serve on its schedule):
//   maintain_interval = 1h           # how often planb serve maintains every shard
//   delete_orphans_after = 1d        # a shard whose map left the config is deleted this long after first seen
// Merging (every node that merges: a storage node, or a single node's load):
//   merge_threads = 2                # batches of different maps merged at once (1 to 16)
//
// Storage nodes (the design's node list; no node_list = a single node that stores and merges itself):
//   node_name = node1a               # default: the host name
//   node_list = ,node1a,node2a       # comma-delimited, starting with a comma
//   request_timeout = 5s             # every request to a node has this deadline
//   send_part_attempts = 3           # tries per request before a node counts as failed
//   send_part_retry_delay = 10s
//   max_batch_size = 64GiB           # the largest batch a node accepts, unzipped (zip bombs)
//   upload_idle_timeout = 30s        # an upload sending nothing this long loses its slot and disk reservation
//   min_transfer_rate = 64KiB        # bytes/s an upload or a served snapshot must keep up over each such window,
//                                    # and a reader's snapshot fetch over each 2 x request_timeout
//   max_client_share = 25%           # of upload slots, upload disk room and served snapshots, per client
//   max_unread_reply_bytes = 128MiB  # replies (remote reads, snapshot chunks) one client may leave unread
//   snapshot_compression = none      # snapshot zips stored as they are (about a file copy to make) or deflate
//                                    # (a third of the bytes to send; several times the making time)
//   max_connections = 1024           # open at once (lowered to fit the open-files limit); a client: its share
//   idle_connection_timeout = 5m     # a connection that sends nothing this long is closed
//   max_remote_where_terms = 10000   # remote reads (--remote): literals in one --where
//   max_remote_rows_examined = 100000000  # remote reads: rows one query may examine
//   max_remote_bytes_examined = 4GiB # remote reads: bytes (keys and values) one query may examine
//   remote_read_timeout = 50s        # remote reads: the longest one query may run on the node
// Reading on nodes that are not storage nodes (local snapshots of the shards, docs/snapshots.md):
//   snapshot_retry_fetch_interval = 1m  # after a failed fetch, the old snapshot serves; retry only after this
//   min_time_to_keep_snapshots = 10m    # a snapshot this old is refreshed (in the background where possible)
//   min_time_to_keep_env_open = 1m      # an environment unused this long is closed by cleanup
//   [node.node1a]
//   endpoint = tcp://10.0.0.1:7601   # where node1a's `planb serve` listens
//   public_key = Z85                 # node1a's CURVE public key (its NAME.pub); every node has one or none does
// Keys and rights (docs/security.md; read and checked here, enforced by the sockets from the next step on):
//   secret_key_file = node1a.key     # this node's own key pair (planb keygen); mode 0600 or narrower
//   allow_plaintext = false          # serve may bind a non-loopback address without keys
//   [client.loader1]                 # on storage nodes: one section per client allowed in
//   public_key = Z85, Z85            # the client's key(s): two while a key is rotated
//   allow = upload, read             # any non-empty subset of upload, read, snapshot
//   maps = a, b                      # optional: only these configured maps (default: every map)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <optional>
#include <set>

#include "host/common/log_format.h"
#include "host/security/curve_key.h"
#include "planb/status.h"

namespace planb {

inline constexpr uint64_t kDefaultMaxStoreSize = uint64_t{10} << 30;
inline constexpr uint64_t kDefaultReadIndexMaxSize = uint64_t{256} << 20;
inline constexpr uint64_t kDefaultLookupCacheSize = uint64_t{1} << 20;
inline constexpr uint32_t kDefaultMaxReaders = 126;

struct MapConfig {
  std::string name;         // valid map name (lower case)
  std::string type;         // store-type plugin name; required
  std::string scheme;       // key-scheme plugin name; empty when not given
  uint64_t max_store_size = kDefaultMaxStoreSize;
  uint32_t max_readers = kDefaultMaxReaders;
  bool synchronise_merge = false;
  // Maintenance (docs/maintenance.md). Durations in ms.
  bool condense = false;
  int64_t condense_after_ms = 0;
  bool retain = false;  // retain_for given (not empty)
  int64_t retain_for_ms = 0;
  double reclaim_free_share = 0.5;  // 0..1
  // The most memory a Reader's read index of the map may take (docs/performance.md); 0: no read index.
  uint64_t read_index_max_size = kDefaultReadIndexMaxSize;
  // Each Reader thread's hot-key cache of the map (text keys without time; docs/performance.md); 0: none.
  uint64_t lookup_cache_size = kDefaultLookupCacheSize;
  // Every other key of the section, in file order: options for the type's or scheme's plugin.
  std::vector<std::pair<std::string, std::string>> plugin_options;
};

struct NodeConfig {
  std::string name;
  std::string endpoint;                   // tcp://HOST:PORT
  std::optional<std::string> public_key = std::nullopt;  // Z85 CURVE key (valid); absent when none is given
};

// What a [client.NAME] section may do on a storage node (docs/security.md); bits of ClientConfig::rights.
// kNode is no config right: the peers of node_list hold it (with their public keys), to list and fetch the batches
// a node merged (catch-up).
enum class Right : uint32_t { kUpload = 1, kRead = 2, kSnapshot = 4, kNode = 8 };
const char* RightName(Right right);  // "upload", "read", "snapshot": as the config spells it; "node" 

struct ClientConfig {
  std::string name;                      // valid node name
  std::vector<std::string> public_keys;  // Z85, valid, distinct; one, or two while a key is rotated
  uint32_t rights = 0;                   // Right bits; never 0
  std::optional<std::set<std::string>> maps;  // configured map names; absent: every map

  bool Allows(Right right, std::string_view map) const;  // map as the user wrote it: lower-cased first
};

// The maps a client's request may touch: absent, every map; else only these (normalised names).
using MapScope = std::optional<std::set<std::string>>;
// Whether `scope` lets a request touch `map` (as the peer wrote it: lower-cased first).
bool ScopeAllows(const MapScope& scope, std::string_view map);

// This node's own key pair, read from secret_key_file.
struct OwnKey {
  std::string file;  // the path read (resolved against the config's directory)
  CurveKeyPair keys;
};

struct ClusterConfig {
  std::string node_name;               // this node; the host name unless the config says otherwise
  std::vector<std::string> node_list;  // the storage nodes, in the config's order; empty = single node
  std::map<std::string, NodeConfig> nodes;  // [node.NAME] sections, by name
  int64_t request_timeout_ms = 5000;
  int send_part_attempts = 3;
  int64_t send_part_retry_delay_ms = 10000;
  uint64_t max_batch_size = uint64_t{64} << 30;
  int64_t snapshot_retry_fetch_interval_ms = 60 * 1000;
  int64_t min_time_to_keep_snapshots_ms = 10 * 60 * 1000;
  int64_t min_time_to_keep_env_open_ms = 60 * 1000;
  // snapshot_compression: a storage node's snapshot zips deflated (deflate) or stored (none, the default).
  bool snapshot_deflate = false;
  int64_t upload_idle_timeout_ms = 30 * 1000;
  uint64_t min_transfer_rate = 64 << 10;
  uint32_t max_client_share_percent = 25;
  uint64_t max_unread_reply_bytes = uint64_t{128} << 20;
  uint32_t max_connections = 1024;
  int64_t idle_connection_timeout_ms = 5 * 60 * 1000;
  uint64_t max_remote_where_terms = 10000;
  uint64_t max_remote_rows_examined = 100000000;
  uint64_t max_remote_bytes_examined = uint64_t{4} << 30;
  int64_t remote_read_timeout_ms = 50 * 1000;
  // Catch-up (docs/storage-nodes.md): a storage node keeps the zips of the batches it merged this long and up to
  // this many bytes (the oldest go first), so that a peer that missed them can fetch them; 0 keeps none.
  int64_t batch_retention_ms = int64_t{3} * 24 * 60 * 60 * 1000;
  uint64_t batch_retention_bytes = uint64_t{10} << 30;
  // How often a storage node compares its shards with its peers' and fetches the batches it lacks; 0: never.
  int64_t catch_up_interval_ms = 10 * 1000;
  // A load succeeds once this many storage nodes have stored each stream (the rest get it by catch-up); absent:
  // every node of node_list. 1..node_list's size.
  std::optional<uint32_t> write_quorum;
  // Node traffic's keys and rights (docs/security.md).
  std::optional<OwnKey> own_key;  // secret_key_file; absent when not set
  bool allow_plaintext = false;
  std::map<std::string, ClientConfig> clients;  // [client.NAME] sections, by name; no key in two of them

  bool single_node() const { return node_list.empty(); }
  // Whether node traffic is CURVE: the nodes have public keys (then all of them do, and own_key is set).
  bool curve() const;
  // The keys to talk to node `name` with: its public key and this node's pair; absent without CURVE.
  // REQUIRES: `name` is in `nodes`.
  std::optional<CurveClientKeys> KeysFor(const std::string& name) const;
  // The client whose public_key list holds `public_key`, or nullptr.
  const ClientConfig* FindClientByKey(std::string_view public_key) const;
  // Whether this node is one of the storage nodes (a single node always is).
  bool IsStorageNode() const;
  // How many storage nodes must store a stream for a load to succeed: write_quorum, or every node.
  size_t WriteQuorum() const { return write_quorum ? *write_quorum : node_list.size(); }
  // How long a merged batch stays recognisable by its id (content_version.h): at least a week, and more than
  // twice batch_retention, so that a batch a peer can still fetch is always recognised by a node that merged it.
  int64_t MergedBatchesKeepMs() const;
};

// How a node is run and watched (docs/operations.md): top-level keys of the config.
struct OperationsConfig {
  // metrics_bind = HOST:PORT: `planb serve` serves /metrics (Prometheus), /healthz and /readyz there; absent: off.
  std::optional<std::string> metrics_bind;
  // ready_min_free_disk: /readyz answers not ready below this much free on the home's filesystem; absent: the
  // margin every write keeps (the larger of 64 MiB and 1% of the filesystem).
  std::optional<uint64_t> ready_min_free_disk;
  // log_file: `planb serve` appends its log there (reopened on SIGHUP) instead of writing it to stderr; relative
  // paths resolve against the config's directory.
  std::optional<std::string> log_file;
  // log_level: the least severe lines written (error, warn, info, debug); log_format: text or json (one object
  // per line), for `serve`'s log and every command's messages on stderr.
  LogLevel log_level = LogLevel::kInfo;
  LogFormat log_format = LogFormat::kText;
};

struct Config {
  std::string path;  // the file read ("" when none)
  std::string home;  // "" when not set; relative paths (home, plugin_dir) resolve against the file's directory
  std::vector<std::string> plugin_dirs;
  // Mode of the files planb creates in the home (octal in the file: file_mode = 0640); its directories get the
  // matching x bits (0750). Always includes owner read and write; at most 0777.
  uint32_t file_mode = 0640;
  std::map<std::string, MapConfig> maps;  // by name
  ClusterConfig cluster;
  OperationsConfig operations;
  int64_t maintain_interval_ms = 60 * 60 * 1000;
  int64_t delete_orphans_after_ms = 24 * 60 * 60 * 1000;
  int merge_threads = 2;

  const MapConfig* FindMap(std::string_view name) const;  // name as the user wrote it: lower-cased first
};

// Reads and validates `path`. Errors name the file, the section and the key, e.g.
// "planb.ini: [map.City]: invalid map name 'City' (lower case letters, digits and _, starting with a letter)".
Status LoadConfig(const std::string& path, Config* config);
// Same, from text in memory; `name` stands for the file in messages and `base_dir` resolves plugin_dir.
Status ParseConfig(std::string_view name, std::string_view text, const std::string& base_dir, Config* config);

// Letters, digits, '.', '-' and '_', at most 253 characters (host names and the design's "node1a").
bool IsValidNodeName(std::string_view name);

// Lower case letters, digits and underscores, starting with a letter; at most 128 characters.
bool IsValidMapName(std::string_view name);
// ASCII lower-casing: how map names in input and lookups are matched to config.
std::string NormaliseMapName(std::string_view name);
// "0640", "640", "0600": octal permission bits with owner read and write (planb must read its own files), no more
// than 0777, and no write bit for group or others. False on anything else.
bool ParseFileMode(std::string_view text, uint32_t* mode);
// "10GiB", "512MiB", "64KiB", "1TiB", "10GB" (decimal), "1048576" (bytes). False on anything else or overflow.
bool ParseByteSize(std::string_view text, uint64_t* bytes);

}  // namespace planb
