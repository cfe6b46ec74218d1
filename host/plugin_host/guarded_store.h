// The host's handle on a plugin's Store: the same calls, each run under a guard that turns an exception escaping
// the plugin into Code::kInternal with a message naming the type, its file and the call ("store type 'x' (PATH):
// Store::Merge threw: WHAT"), and words an error the plugin returned the same way ("...: Store::Merge: WHAT"; one
// the map's scheme made and the store type handed on names the scheme alone).
// After each call it checks (one relaxed load) whether the map's scheme adapter
// recorded a throw in a call without an error channel, and then fails the call with that error, so that the
// caller rolls back whatever the call wrote. Allocates nothing unless a call fails.
// Thread-safety: as Store (Get, DecodeRow and ScanRange from many threads; writes in the write transaction).
#pragma once

#include <cstring>
#include <exception>
#include <string>

#include "host/plugin_host/guarded_scheme.h"
#include "planb/store.h"

namespace planb {

class GuardedStore {
 public:
  // `label` names the plugin; `scheme` (null for types without a text key) is the adapter the store was given.
  // Both `inner` and `scheme` must outlive this.
  GuardedStore(Store* inner, std::string label, const GuardedScheme* scheme)
      : inner_(inner), label_(std::move(label)), scheme_(scheme) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) const {
    return Call("Store::Put", error, [&] { return inner_->Put(batch, record, error); });
  }
  // A merge that placed values through a value plan and returned kOk without finishing it wrote no counts: an
  // error, so that the caller rolls it back.
  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) const {
    if (scheme_ != nullptr) (void)scheme_->TakeUnfinishedPlan();  // a note left by another caller is not ours
    const Code code = Call("Store::Merge", error, [&] { return inner_->Merge(batch, shard, stats, error); });
    if (scheme_ == nullptr || !scheme_->TakeUnfinishedPlan() || code != Code::kOk) return code;
    return Fail(error, Code::kInternal,
                "%s: Store::Merge placed values through a value plan and never finished it "
                "(KeyedRowWriter::FinishMerge); the merge is rolled back",
                label_.c_str());
  }
  Code Get(const Table& shard, const LookupKey& key, Row* row, ErrorBuffer* error) const {
    return Call("Store::Get", error, [&] { return inner_->Get(shard, key, row, error); });
  }
  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row, ErrorBuffer* error) const {
    return Call("Store::DecodeRow", error, [&] { return inner_->DecodeRow(table, lmdb_key, value, row, error); });
  }
  Code Maintain(const Table& shard, const MaintainRequest& request, MaintainStats* stats, ErrorBuffer* error) const {
    return Call("Store::Maintain", error, [&] { return inner_->Maintain(shard, request, stats, error); });
  }
  Code DeleteRow(const Table& shard, Bytes lmdb_key, Bytes value, ErrorBuffer* error) const {
    return Call("Store::DeleteRow", error, [&] { return inner_->DeleteRow(shard, lmdb_key, value, error); });
  }
  Code FinishDeletes(const Table& shard, ErrorBuffer* error) const {
    return Call("Store::FinishDeletes", error, [&] { return inner_->FinishDeletes(shard, error); });
  }
  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range, ErrorBuffer* error) const {
    return Call("Store::ScanRange", error, [&] { return inner_->ScanRange(table, bounds, range, error); });
  }

  const std::string& label() const { return label_; }

 private:
  template <typename F>
  Code Call(const char* call, ErrorBuffer* error, F&& f) const {
    Code code;
    try {
      code = f();
    } catch (const std::exception& e) {
      return ReportThrow(label_, call, e.what(), error);
    } catch (...) {
      return ReportThrow(label_, call, nullptr, error);
    }
    if (scheme_ != nullptr && scheme_->failed()) return scheme_->TakeFailure(error);
    if (IsReturnedError(code)) [[unlikely]] return PrefixStoreError(call, code, error);
    return code;
  }

  // A scheme's error the store type handed on already names the scheme, which made it: left as it is. Any other
  // is the store type's, named by PrefixReturnedError.
  [[gnu::cold]] [[gnu::noinline]] Code PrefixStoreError(const char* call, Code code, ErrorBuffer* error) const {
    if (error != nullptr && scheme_ != nullptr &&
        std::strncmp(error->message, scheme_->label().c_str(), scheme_->label().size()) == 0) {
      return code;
    }
    return PrefixReturnedError(label_, call, code, error);
  }

  Store* inner_;
  std::string label_;
  const GuardedScheme* scheme_;
};

}  // namespace planb
