#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "host/common/iso_time.h"
#include "host/plugin_host/key_format.h"
#include "host/reader/open_map.h"
#include "host/reader/point_answer_index.h"
#include "host/reader/reader_impl.h"
#include "host/storage/content_version.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

LookupResult ErrorResult(Code code, const char* message) {
  LookupResult result;
  result.code = code;
  result.error = message;
  return result;
}

// Runs the store's Get on the context's transaction; `result` is reset first.
void Get(const MapContext& context, const LookupKey& key, LookupResult* result, ErrorBuffer* error) {
  *result = LookupResult();
  Row row;
  error->message[0] = '\0';
  const Code code = context.reader->Lookup(key, &row, error);
  if (code == Code::kOk) {
    result->code = Code::kOk;
    result->value = row.value;
    result->value_type = row.value_type;
    result->session_start_ms = row.session_start_ms;
    result->session_end_ms = row.session_end_ms;
    result->fields = row.own_fields;  // the context's MapReader's array: valid until its next lookup
    result->field_count = row.own_field_count;
  } else if (code != Code::kNotFound) {
    if (error->message[0] == '\0') std::snprintf(error->message, ErrorBuffer::kCapacity, "%s", CodeName(code));
    result->code = code;
    result->error = error->message;
  }
}

// Answers from a point index every key of the batch it reads (a text key asked about now), overlapping the
// cache misses of several keys: each key is hashed and its slot prefetched 2 * kAhead keys before it is
// answered, and its entry kAhead keys before. Marks the keys answered in `answered` and counts them in `tally`.
void AnswerFromPointIndex(const PointAnswerIndex& index, const ReaderKey* keys, size_t count, LookupResult* results,
                          uint8_t* answered, LookupTotals* tally) {
  constexpr size_t kAhead = 16;
  constexpr size_t kRing = 64;  // at least 2 * kAhead + 1 keys in flight
  uint64_t hashes[kRing];
  bool reads[kRing];
  for (size_t i = 0; i < count + 2 * kAhead; ++i) {
    if (i < count) {
      const ReaderKey& key = keys[i];
      const bool read = key.number == 0 && key.time.is_now() && index.Reads(key.key);
      reads[i % kRing] = read;
      if (read) {
        hashes[i % kRing] = PointAnswerIndex::Hash(key.key);
        index.Prefetch(hashes[i % kRing]);
      }
    }
    if (i >= kAhead && i - kAhead < count && reads[(i - kAhead) % kRing]) {
      index.PrefetchEntry(hashes[(i - kAhead) % kRing]);
    }
    if (i < 2 * kAhead) continue;
    const size_t j = i - 2 * kAhead;
    answered[j] = 0;
    if (!reads[j % kRing]) continue;
    LookupResult& r = results[j];
    r = LookupResult();
    const bool found =
        index.FindHashed(keys[j].key, hashes[j % kRing], &r.value, &r.value_type) == AnswerIndex::Answer::kFound;
    r.code = found ? Code::kOk : Code::kNotFound;
    ++(found ? tally->found : tally->misses);
    answered[j] = 1;
  }
}

// The content version of what lookups of `env` read.
Status ReadServedVersion(const MapEnv& env, ContentVersion* out) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  return ReadContentVersion(txn.get(), env.meta(), out);
}

}  // namespace

Status Reader::Impl::Open(const ReaderOptions& options, std::unique_ptr<Reader>* out) {
  if (options.maintenance_interval_ms < 0) {
    return Status::Invalid("ReaderOptions::maintenance_interval_ms is " +
                           std::to_string(options.maintenance_interval_ms) + "; 0 (no thread) or more, please");
  }
  std::unique_ptr<Impl> impl(new Impl());
  RuntimeOptions runtime_options;
  runtime_options.config_path = options.config_path;
  runtime_options.home = options.home;
  runtime_options.plugin_dirs = options.plugin_dirs;
  runtime_options.read_only = true;  // the Reader never writes a shard; snapshot fetches write only snapshots/
  PLANB_RETURN_IF_ERROR(Runtime::Open(runtime_options, &impl->runtime_));
  for (const auto& [name, plugins] : impl->runtime_->catalog().maps()) {
    impl->slots_.push_back(std::make_unique<MapSlot>(static_cast<uint32_t>(impl->slots_.size()), plugins));
    impl->known_maps_ += (impl->known_maps_.empty() ? "" : ", ") + name;
  }
  if (impl->known_maps_.empty()) impl->known_maps_ = "none";
  if (options.remote) {
    const ClusterConfig& cluster = impl->runtime_->config().cluster;
    if (cluster.node_list.empty()) {
      return Status::Invalid("ReaderOptions::remote: the config (" + impl->runtime_->config().path +
                             ") has no node_list; remote lookups ask its storage nodes");
    }
    if (options.remote_connections == 0) {
      return Status::Invalid("ReaderOptions::remote_connections is 0; 1 or more, please");
    }
    impl->remote_ = std::make_unique<RemotePool>(cluster, options.remote_connections);
    impl->remote_facts_ = std::make_unique<RemoteFacts[]>(impl->slots_.size());
  }
  // Maps set aside because a plugin they need did not load: said in the unknown-map error, with why.
  for (const auto& [name, why] : impl->runtime_->catalog().unavailable()) {
    impl->known_maps_ += "; " + name + " is unavailable: " + why.message();
  }
  impl->serial_ = NextReaderSerial();
  // Storage nodes read their shards: the thread only reopens those that maintenance compacted and swapped.
  if (options.maintenance_interval_ms > 0 && !options.remote) {
    Impl* raw = impl.get();
    impl->thread_ = std::thread([raw, interval = options.maintenance_interval_ms] { raw->MaintenanceLoop(interval); });
  }
  out->reset(new Reader(std::move(impl)));
  return Status::Ok();
}

Reader::Impl::~Impl() {
  closing_.store(true, std::memory_order_relaxed);  // ends an index build the thread may be in
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // No lookup runs now; threads still holding entries for this Reader will find the registry closed.
  contexts_->CloseAll();
  remote_.reset();  // its connections before the config they were made from
  slots_.clear();
  runtime_.reset();
}

MapSlot* Reader::Impl::FindSlot(std::string_view map) const {
  for (const std::unique_ptr<MapSlot>& slot : slots_) {
    if (slot->Matches(map)) return slot.get();
  }
  return nullptr;
}

LookupResult Reader::Impl::UnknownMap(std::string_view map) const {
  ErrorBuffer* error = ThreadErrorBuffer();
  std::snprintf(error->message, ErrorBuffer::kCapacity, "map '%.*s' is not in the config (configured maps: %s)",
                static_cast<int>(map.size()), map.data(), known_maps_.c_str());
  return ErrorResult(Code::kInvalidArgument, error->message);
}

Code Reader::Impl::Begin(MapSlot& slot, MapContext** context, bool renew) {
  MapContext* ctx = FindThreadContext(serial_, slot.index());
  if (ctx == nullptr) ctx = AddThreadContext(serial_, slot.index(), contexts_);
  *context = ctx;
  slot.MarkUsed();
  if (ctx->generation != slot.generation()) return Switch(slot, ctx);
  return renew ? Renew(ctx) : Code::kOk;
}

Code Reader::Impl::Renew(MapContext* ctx) {
  Status s = ctx->reader->Refresh();
  if (s.ok()) return Code::kOk;
  ctx->Close();  // the next lookup begins a new transaction
  return Fail(&ctx->error, s.code(), "%s", s.message().c_str());
}

Code Reader::Impl::Switch(MapSlot& slot, MapContext* ctx) {
  std::shared_ptr<MapEnv> env;
  std::shared_ptr<const AnswerIndex> index;
  uint64_t generation = 0;
  const Code code = slot.AcquireForLookup(*runtime_, &env, &index, &generation, &ctx->error);
  if (code != Code::kOk) {
    ctx->Close();
    return code;
  }
  Status s;
  if (ctx->reader.has_value() && &ctx->reader->env() == env.get()) {
    s = ctx->reader->Refresh();  // e.g. published again after an idle drop: same environment
  } else {
    // Lets go of the old environment, which closes when its last holder (a thread, the slot) lets go. Its cached
    // answers go too: another environment's transaction ids say nothing about this one.
    ctx->cache.reset();
    ctx->reader.reset();
    ctx->reader.emplace();
    s = ctx->reader->Open(std::move(env));
  }
  if (!s.ok()) {
    ctx->Close();
    return Fail(&ctx->error, s.code(), "%s", s.message().c_str());
  }
  ctx->generation = generation;
  ctx->index = std::move(index);
  return Code::kOk;
}

// `lookup` carries the text key or the number (`number_key` says which); its time is filled here.
LookupResult Reader::Impl::LookupOne(std::string_view map, LookupKey lookup, bool number_key, LookupTime time) {
  MapSlot* slot = FindSlot(map);
  if (slot == nullptr) {
    unknown_map_lookups_.fetch_add(1, std::memory_order_relaxed);
    return UnknownMap(map);
  }
  if (slot->number_keys() != number_key) {
    slot->CountRefusedKey();
    return ErrorResult(Code::kInvalidArgument, number_key ? slot->number_key_error() : slot->text_key_error());
  }
  if (!time.is_now() && !slot->uses_time()) {
    slot->CountRefusedKey();
    return ErrorResult(Code::kInvalidArgument, slot->time_error());
  }
  if (remote_ != nullptr) return LookupOneRemote(*slot, lookup, number_key, time);
  MapContext* ctx = nullptr;
  // With a read index or a hot-key cache the transaction is renewed only when neither can answer.
  const bool try_index = slot->indexed();
  const bool lazy = try_index || slot->cached();
  Code code = Begin(*slot, &ctx, /*renew=*/!lazy);  // a map with no data here is kNoData, an error like any other
  if (code != Code::kOk) {
    ctx->counters.Count(code);
    return ErrorResult(code, ctx->error.message);
  }
  LookupResult result;
  HotKeyCache* cache = slot->cached() ? CacheOf(*slot, ctx) : nullptr;
  uint64_t hash = 0;
  if (cache != nullptr) {
    cache->BeginCall();
    bool found = false;
    if (!cache->Active()) {
      cache = nullptr;
    } else if (hash = HotKeyCache::Hash(lookup.key.view());
               cache->Find(lookup.key.view(), hash, LastCommittedTxnId(ctx->reader->env()), &found, &result.value,
                           &result.value_type)) {
      result.code = found ? Code::kOk : Code::kNotFound;
      ctx->counters.Count(result.code);
      ctx->counters.CountCached();
      return result;
    }
  }
  if (lazy && !try_index) {
    code = Renew(ctx);
    if (code != Code::kOk) {
      ctx->counters.Count(code);
      return ErrorResult(code, ctx->error.message);
    }
  }
  if (try_index) {
    if (ctx->index != nullptr && ctx->index->IsCurrent()) {
      const AnswerIndex::Answer answer =
          number_key ? ctx->index->FindNumber(lookup.number, &result.value, &result.value_type)
                     : ctx->index->Find(lookup.key.view(), &result.value, &result.value_type);
      if (answer != AnswerIndex::Answer::kNotRead) {
        result.code = answer == AnswerIndex::Answer::kFound ? Code::kOk : Code::kNotFound;
        ctx->counters.Count(result.code);
        // A key asked again is cheaper from the thread's cache (a few hot lines) than from the index (two misses).
        if (cache != nullptr) {
          cache->Put(lookup.key.view(), hash, ctx->index->txn_id(), result.code == Code::kOk, result.value,
                     result.value_type);
        }
        return result;
      }
    }
    code = Renew(ctx);
    if (code != Code::kOk) {
      ctx->counters.Count(code);
      return ErrorResult(code, ctx->error.message);
    }
  }
  if (slot->uses_time()) lookup.time_ms = time.is_now() ? CurrentTimeMs() : time.ms();
  Get(*ctx, lookup, &result, &ctx->error);
  ctx->counters.Count(result.code);
  if (cache != nullptr && (result.code == Code::kOk || result.code == Code::kNotFound)) {
    cache->Put(lookup.key.view(), hash, mdb_txn_id(ctx->reader->table().txn), result.code == Code::kOk, result.value,
               result.value_type);
  }
  return result;
}

// The calling thread's hot-key cache of the slot's map, made at its first lookup (the one allocation).
HotKeyCache* Reader::Impl::CacheOf(const MapSlot& slot, MapContext* ctx) {
  if (ctx->cache == nullptr) ctx->cache = std::make_unique<HotKeyCache>(slot.cache_bytes());
  return ctx->cache.get();
}

Code Reader::Impl::LookupMany(std::string_view map, const ReaderKey* keys, size_t count, LookupResult* results) {
  MapSlot* slot = FindSlot(map);
  if (slot != nullptr && remote_ != nullptr) return LookupManyRemote(*slot, keys, count, results);
  LookupResult failed;
  MapContext* ctx = nullptr;
  const bool lazy = slot != nullptr && (slot->indexed() || slot->cached());
  if (slot == nullptr) {
    unknown_map_lookups_.fetch_add(count, std::memory_order_relaxed);
    failed = UnknownMap(map);
  } else {
    const Code code = Begin(*slot, &ctx, /*renew=*/!lazy);  // kNoData (no data here) included
    if (code != Code::kOk) {
      LookupTotals all_failed;
      all_failed.errors = count;
      ctx->counters.Add(all_failed);
      failed = ErrorResult(code, ctx->error.message);
    }
  }
  if (failed.code != Code::kNotFound) {
    for (size_t i = 0; i < count; ++i) results[i] = failed;
    return failed.code;
  }
  const bool number_keys = slot->number_keys();
  const bool uses_time = slot->uses_time();
  // The read index and the hot-key cache answer what they can, as of the transaction `fast_txn`; the transaction
  // is renewed at the first key neither answers. Should a merge have committed in between, the batch is answered
  // again from the renewed transaction alone: a batch is one version of the map.
  const AnswerIndex* index =
      slot->indexed() && ctx->index != nullptr && ctx->index->IsCurrent() ? ctx->index.get() : nullptr;
  HotKeyCache* cache = slot->cached() ? CacheOf(*slot, ctx) : nullptr;
  if (cache != nullptr) cache->BeginCall();
  const uint64_t fast_txn = index != nullptr ? index->txn_id() : lazy ? LastCommittedTxnId(ctx->reader->env()) : 0;
  bool renewed = !lazy;
  bool served_fast = false;
  std::optional<int64_t> now;  // read once per batch, when a key asks about now
  Code first_error = Code::kOk;
  LookupTotals tally;  // counted once per batch: one store per counter, not one per key
  ctx->many_errors.clear();
  const PointAnswerIndex* point =
      index != nullptr && index->kind() == ReadIndexKind::kPoint ? static_cast<const PointAnswerIndex*>(index) : nullptr;
  if (point != nullptr) {
    if (ctx->many_answered.size() < count) ctx->many_answered.resize(count);
    AnswerFromPointIndex(*point, keys, count, results, ctx->many_answered.data(), &tally);
    served_fast = tally.found + tally.misses > 0;
  }
  for (size_t i = 0; i < count; ++i) {
    if (point != nullptr && ctx->many_answered[i] != 0) continue;
    const ReaderKey& key = keys[i];
    const char* wrong = nullptr;
    if (number_keys ? !key.key.empty() : key.number != 0) {
      wrong = number_keys ? slot->text_key_error() : slot->number_key_error();
    } else if (!key.time.is_now() && !uses_time) {
      wrong = slot->time_error();
    }
    if (wrong != nullptr) {
      results[i] = ErrorResult(Code::kInvalidArgument, wrong);
      if (first_error == Code::kOk) first_error = Code::kInvalidArgument;
      ++tally.errors;
      continue;
    }
    LookupResult& r = results[i];
    if (index != nullptr) {
      r = LookupResult();
      const AnswerIndex::Answer answer =
          number_keys ? index->FindNumber(key.number, &r.value, &r.value_type) : index->Find(key.key, &r.value, &r.value_type);
      if (answer != AnswerIndex::Answer::kNotRead) {
        r.code = answer == AnswerIndex::Answer::kFound ? Code::kOk : Code::kNotFound;
        ++(r.code == Code::kOk ? tally.found : tally.misses);
        served_fast = true;
        continue;
      }
    }
    uint64_t hash = 0;
    bool put = false;
    if (cache != nullptr && cache->Active()) {
      r = LookupResult();
      hash = HotKeyCache::Hash(key.key);
      bool found = false;
      if (cache->Find(key.key, hash, fast_txn, &found, &r.value, &r.value_type)) {
        r.code = found ? Code::kOk : Code::kNotFound;
        ++(found ? tally.found : tally.misses);
        ++tally.cached;
        served_fast = true;
        continue;
      }
      put = true;
    }
    if (!renewed) {
      const Code code = Renew(ctx);
      if (code != Code::kOk) {
        const LookupResult failed_here = ErrorResult(code, ctx->error.message);
        for (size_t j = i; j < count; ++j) results[j] = failed_here;
        tally.errors += count - i;
        ctx->counters.Add(tally);
        return first_error != Code::kOk ? first_error : code;
      }
      renewed = true;
      if (served_fast && mdb_txn_id(ctx->reader->table().txn) != fast_txn) {
        index = nullptr;  // from the start again, every key from this transaction
        point = nullptr;
        cache = nullptr;
        served_fast = false;
        put = false;
        first_error = Code::kOk;
        tally = LookupTotals();
        ctx->many_errors.clear();
        i = static_cast<size_t>(-1);  // the loop's ++i makes it 0
        continue;
      }
    }
    LookupKey lookup;
    lookup.key = Bytes(key.key);
    lookup.number = key.number;
    if (uses_time) {
      if (key.time.is_now() && !now.has_value()) now = CurrentTimeMs();
      lookup.time_ms = key.time.is_now() ? *now : key.time.ms();
    }
    Get(*ctx, lookup, &r, &ctx->error);
    if (r.field_count != 0) {  // the reader's array is reused by the next key: each result gets its own
      const size_t n = r.field_count;
      if (ctx->many_fields.size() < count * n) ctx->many_fields.resize(count * n);
      FieldValue* own = ctx->many_fields.data() + i * n;
      std::copy(r.fields, r.fields + n, own);
      r.fields = own;
    }
    if (r.code == Code::kInvalidArgument) {
      // The store refused this key (an address map's malformed address): only its own result fails, and keeps
      // its own message (the context's buffer is the next key's).
      ctx->many_errors.emplace_back(r.error);
      r.error = ctx->many_errors.back().c_str();
      if (first_error == Code::kOk) first_error = Code::kInvalidArgument;
      ++tally.errors;
      continue;
    }
    if (r.code != Code::kOk && r.code != Code::kNotFound) {
      // The store failed (a corrupt row, an I/O error): the rest of the batch would read the same transaction.
      for (size_t j = i + 1; j < count; ++j) results[j] = r;
      tally.errors += count - i;
      ctx->counters.Add(tally);
      return first_error != Code::kOk ? first_error : r.code;
    }
    ++(r.code == Code::kOk ? tally.found : tally.misses);
    if (put) cache->Put(key.key, hash, mdb_txn_id(ctx->reader->table().txn), r.code == Code::kOk, r.value, r.value_type);
  }
  ctx->counters.Add(tally);
  return first_error;
}

Status Reader::Impl::Prepare(std::string_view map) {
  MapSlot* slot = FindSlot(map);
  if (slot == nullptr) return Status::Invalid(UnknownMap(map).error);
  if (remote_ != nullptr) return PrepareRemote(*slot);
  std::shared_ptr<MapEnv> env;
  uint64_t generation = 0;
  return slot->Acquire(*runtime_, /*force=*/true, &env, &generation);
}

Status Reader::Impl::Refresh(std::string_view map) {
  MapSlot* slot = FindSlot(map);
  if (slot == nullptr) return Status::Invalid(UnknownMap(map).error);
  if (remote_ != nullptr) return Status::Ok();  // every remote lookup reads the node's shard as it is
  if (runtime_->config().cluster.IsStorageNode()) return ReopenIfReplaced(*slot);
  bool changed = false;
  Status fetched = runtime_->snapshots()->Refresh(slot->name(), &changed);
  if (!fetched.ok()) {
    slot->NoteRefreshFailure(fetched);
    return fetched;
  }
  std::shared_ptr<MapEnv> env;
  std::optional<int64_t> created;
  PLANB_RETURN_IF_ERROR(OpenMapForReading(*runtime_, slot->name(), StaleSnapshot::kUseCurrent, &env, &created));
  if (slot->env() == nullptr) {
    slot->Publish(std::move(env), created);
  } else {
    slot->ReplaceIfChanged(env, created);
  }
  return Status::Ok();
}

// Merges update a shard in place, which lookups see by renewing their transaction; a compaction replaces its files
// (shard_compaction.h), which they see only once the slot holds the new environment.
Status Reader::Impl::ReopenIfReplaced(MapSlot& slot) {
  const std::shared_ptr<MapEnv> held = slot.env();
  if (held == nullptr || !held->Replaced()) return Status::Ok();
  std::shared_ptr<MapEnv> env;
  std::optional<int64_t> created;
  Status s = OpenMapForReading(*runtime_, slot.name(), StaleSnapshot::kUseCurrent, &env, &created);
  if (!s.ok()) {
    slot.NoteRefreshFailure(s);
    return s;
  }
  slot.ReplaceIfChanged(env, created);
  return Status::Ok();
}

Status Reader::Impl::Describe(std::string_view map, MapInfo* out) const {
  MapSlot* slot = FindSlot(map);
  if (slot == nullptr) return Status::Invalid(UnknownMap(map).error);
  const PluginDescriptor& d = slot->plugins().type_descriptor();
  MapInfo info;
  info.type = d.name;
  info.number_keys = slot->number_keys();
  info.uses_time = slot->uses_time();
  // As queries and output see them: an ip map's KeyStart / KeyEnd are addresses, not the type's numbers.
  for (const FieldSpec& spec : MapFields(d, slot->plugins().config())) {
    if (spec.field == RowField::kValue) info.has_value = true;
    if (spec.field == RowField::kStart) info.has_session = true;
    FieldInfo field;
    field.name = spec.name;
    field.kind = spec.kind;
    field.own = spec.field == RowField::kOwn;
    field.flags = spec.flags;
    info.fields.push_back(std::move(field));
  }
  *out = std::move(info);
  return Status::Ok();
}

Status Reader::Impl::Maintain() {
  std::lock_guard<std::mutex> lock(maintain_mutex_);
  if (remote_ != nullptr) return Status::Ok();  // nothing held here to refresh or clean
  const ClusterConfig& cluster = runtime_->config().cluster;
  Status first;
  auto note = [&first](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  if (cluster.IsStorageNode()) {
    for (const std::unique_ptr<MapSlot>& slot : slots_) {
      note(ReopenIfReplaced(*slot));
      slot->RefreshIndex(&closing_);  // merges change a shard in place: its index is built anew now and then
    }
    return first;
  }
  const int64_t now = CurrentTimeMs();
  for (const std::unique_ptr<MapSlot>& slot : slots_) {
    if (slot->env() == nullptr) {
      (void)slot->DropIfIdle(now, cluster.min_time_to_keep_env_open_ms);  // clears the used flag
      continue;
    }
    Status fetched = RefreshSnapshotIfDue(*runtime_, slot->name());
    if (!fetched.ok()) slot->NoteRefreshFailure(fetched);
    note(std::move(fetched));
    std::shared_ptr<MapEnv> env;
    std::optional<int64_t> created;
    Status s = OpenMapForReading(*runtime_, slot->name(), StaleSnapshot::kUseCurrent, &env, &created);
    if (s.ok()) {
      slot->ReplaceIfChanged(env, created);
    } else {
      note(std::move(s));
    }
    env.reset();
    slot->RefreshIndex(&closing_);  // a snapshot never changes: a first build, or one that failed or was skipped
    slot->DropIfIdle(now, cluster.min_time_to_keep_env_open_ms);
  }
  note(CleanupSnapshots(*runtime_));
  return first;
}

ReaderStats Reader::Impl::Stats() const {
  ReaderStats stats;
  const bool storage_node = runtime_->config().cluster.IsStorageNode();
  for (const std::unique_ptr<MapSlot>& slot : slots_) {
    MapStats map;
    map.map = slot->name();
    const LookupTotals totals = contexts_->Sum(slot->index());
    map.found = totals.found;
    map.misses = totals.misses;
    map.errors = totals.errors + slot->refused_keys();
    map.cache_answers = totals.cached;
    map.lookups = map.found + map.misses + map.errors;
    if (remote_ != nullptr) {
      const RemoteFacts& remote = remote_facts_[slot->index()];
      map.reads_remote = true;
      map.serving = remote.answered.load(std::memory_order_relaxed);
      if (map.serving) map.content_version = remote.batches.load(std::memory_order_relaxed);
      stats.maps.push_back(std::move(map));
      continue;
    }
    SlotFacts facts = slot->Facts();
    map.serving = facts.env != nullptr;
    map.reads_snapshot = !storage_node;
    map.snapshot_created_ms = facts.snapshot_created_ms;
    map.refreshes = facts.refreshes;
    map.refresh_failures = facts.refresh_failures;
    map.last_refresh_error = std::move(facts.last_refresh_error);
    if (facts.index != nullptr) {
      map.read_index_bytes = facts.index->bytes();
      map.read_index_current = facts.index->IsCurrent();
    }
    map.read_index_error = std::move(facts.index_error);
    map.read_index_builds = facts.index_builds;
    if (facts.env != nullptr) {
      // A transaction of its own (the environments are MDB_NOTLS): a thread's lookup transaction is its own.
      ContentVersion version;
      if (ReadServedVersion(*facts.env, &version).ok()) map.content_version = version.batches;
    }
    stats.maps.push_back(std::move(map));
  }
  stats.unknown_map_lookups = unknown_map_lookups_.load(std::memory_order_relaxed);
  if (remote_ != nullptr) stats.remote_connections = remote_->connections_made();
  return stats;
}

void Reader::Impl::MaintenanceLoop(int64_t interval_ms) {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  for (;;) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(interval_ms);
    if (stop_cv_.wait_until(lock, deadline, [this] { return stopping_; })) return;
    lock.unlock();
    // A failed refresh is recorded by the snapshot manager and retried after its interval; the old snapshot
    // keeps serving, so there is nothing more to do here.
    (void)Maintain();
    lock.lock();
  }
}

Status Reader::Impl::TEST_Publish(std::string_view map, std::shared_ptr<MapEnv> env) {
  MapSlot* slot = FindSlot(map);
  if (slot == nullptr) return Status::Invalid(UnknownMap(map).error);
  slot->Publish(std::move(env), std::nullopt);
  return Status::Ok();
}

// The public face: forwards to Impl.

Status Reader::Open(const ReaderOptions& options, std::unique_ptr<Reader>* out) { return Impl::Open(options, out); }
Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reader::~Reader() = default;

LookupResult Reader::Lookup(std::string_view map, std::string_view key) {
  return Lookup(map, key, LookupTime::Now());
}
LookupResult Reader::Lookup(std::string_view map, std::string_view key, LookupTime time) {
  LookupKey lookup;
  lookup.key = Bytes(key);
  return impl_->LookupOne(map, lookup, /*number_key=*/false, time);
}
LookupResult Reader::Lookup(std::string_view map, int64_t number) { return Lookup(map, number, LookupTime::Now()); }
LookupResult Reader::Lookup(std::string_view map, int64_t number, LookupTime time) {
  LookupKey lookup;
  lookup.number = number;
  return impl_->LookupOne(map, lookup, /*number_key=*/true, time);
}
Code Reader::LookupMany(std::string_view map, const ReaderKey* keys, size_t count, LookupResult* results) {
  return impl_->LookupMany(map, keys, count, results);
}
Status Reader::Prepare(std::string_view map) { return impl_->Prepare(map); }
Status Reader::Refresh(std::string_view map) { return impl_->Refresh(map); }
Status Reader::Describe(std::string_view map, MapInfo* out) const { return impl_->Describe(map, out); }
Status Reader::Maintain() { return impl_->Maintain(); }
ReaderStats Reader::Stats() const { return impl_->Stats(); }
bool Reader::ParseTime(std::string_view text, int64_t* ms) { return ParseIsoTime(text, ms); }
std::string Reader::FormatTime(int64_t ms) { return FormatIsoTime(ms); }

}  // namespace planb
