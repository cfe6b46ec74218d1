// The host's KeyScheme in front of a plugin's: every call runs under a guard that turns an escaped exception into
// an error naming the scheme, its file and the call (Code::kInternal). Store types get this adapter (never the
// plugin's scheme), so that a scheme's exception names the scheme even when the store type made the call.
//
// Sizes a scheme reports that the store type then reads or copies by are checked: the prefix and stored key of a
// row it decoded or placed (DecodeRow, MergePlan::PlaceRow) against the row, and the size of a prefix it gave
// (FirstCandidate, NextCandidate, NewPrefix, a placed row's shard prefix) against LMDB's keys. Past them is an
// error naming the scheme and the sizes.
// Calls with no error channel (RowHasKey, MatchStoredKey, StoredKeySize, WriteStoredKey) return a safe value
// (false, 0, nothing written) after a throw, record the failure (per thread, and the first one on the adapter) and
// set a sticky flag; GuardedStore checks the flag after each store call and turns the call's result into that
// error, so a write that saw the safe value is rolled back. Layout, TablesInUse, StoresValuesAsGiven and
// LookupForm are read once, at Create.
// Thread-safety: as KeyScheme (any thread); the flag is atomic, the first failure under a mutex.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "planb/key_scheme.h"
#include "planb/status.h"

namespace planb {

// "Store::Merge threw: WHAT" (a non-standard exception: "threw a non-standard exception"), after `label`: .
std::string ThrewText(const std::string& label, const char* call, const char* what);
// Writes ThrewText into `error` (when non-null) and returns Code::kInternal.
Code ReportThrow(const std::string& label, const char* call, const char* what, ErrorBuffer* error);
// An error a plugin returned (any code but kOk and kNotFound, which is a miss or "none" and carries no message),
// worded as a thrown one is: `label`: `call`: the plugin's message (or "returned CODE without a message"), so that
// every error names the plugin and the call. Leaves a message that already starts with `label` alone. Returns
// `code`. Out of line and cold: the callers pay one compare.
[[gnu::cold]] [[gnu::noinline]] Code PrefixReturnedError(const std::string& label, const char* call, Code code,
                                                         ErrorBuffer* error);
inline bool IsReturnedError(Code code) { return code != Code::kOk && code != Code::kNotFound; }

class GuardedScheme final : public KeyScheme {
 public:
  // `label` names the plugin ("scheme 'hashed' (/path/libplanb_hashed_key.so)"); `abi_minor` is the SDK minor it
  // was built against (calls a later minor added are not made). Reads inner's Layout and TablesInUse; an
  // exception there is an error. `inner` must outlive the adapter.
  static Status Create(const KeyScheme* inner, std::string label, uint32_t abi_minor,
                       std::unique_ptr<GuardedScheme>* out);

  Code FirstCandidate(const Table& table, Bytes key, Intent intent, Candidate* out,
                      ErrorBuffer* error) const override;
  bool RowHasKey(Bytes key, Bytes value) const override;
  bool MatchStoredKey(const KeyPrefix& prefix, Bytes key, Bytes value, uint32_t* stored_key_size) const override;
  Code NextCandidate(const Table& table, Bytes key, Bytes after, KeyPrefix* prefix,
                     ErrorBuffer* error) const override;
  Code NewPrefix(const Table& table, Bytes key, bool taken, KeyPrefix* prefix, ErrorBuffer* error) const override;
  uint32_t StoredKeySize(const KeyPrefix& prefix, Bytes key) const override;
  void WriteStoredKey(const KeyPrefix& prefix, Bytes key, uint8_t* out) const override;
  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const override;
  Code EncodeValue(const Table& table, Bytes value, uint8_t* scratch, Bytes* stored,
                   ErrorBuffer* error) const override;
  Code DecodeValue(const Table& table, Bytes stored, Bytes* value, ErrorBuffer* error) const override;
  Code ReleaseValue(const Table& table, Bytes stored, ErrorBuffer* error) const override;
  Code SweepUnusedKeys(const Table& table, uint32_t suffix_size, uint64_t* removed,
                       ErrorBuffer* error) const override;
  // A plan of the inner scheme's comes back wrapped: its calls are guarded too.
  Code PlanMerge(const Table& batch, const Table& shard, MergePlan** plan, ErrorBuffer* error) const override;
  // Likewise a value plan (asked only of schemes built against 7.4 or later).
  Code PlanValues(const Table& batch, const Table& shard, ValuePlan** plan, ErrorBuffer* error) const override;
  Bytes Layout() const override { return Bytes(layout_); }
  uint32_t TablesInUse() const override { return tables_in_use_; }
  // The inner scheme's answer, read once at Create (false before 7.5).
  bool StoresValuesAsGiven() const override { return values_as_given_; }
  // The inner scheme's form, read once at Create and kept only when its own answers agree (none before 7.6).
  KeyForm LookupForm() const override { return form_; }

  // Whether a call without an error channel threw (sticky: the instance is not trusted after that).
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // REQUIRES: failed(). This thread's last such failure, else the first one; into `error`.
  Code TakeFailure(ErrorBuffer* error) const;

  // Whether a value plan of this scheme was destroyed on this thread, since the last call, after it placed values
  // but before a successful Finish (a store type that took rows through KeyedRowWriter::PutBatchRow without
  // FinishMerge: the merge's counts were never written). Clears the note.
  bool TakeUnfinishedPlan() const;

  const std::string& label() const { return label_; }

 private:
  GuardedScheme(const KeyScheme* inner, std::string label, uint32_t abi_minor)
      : inner_(inner), label_(std::move(label)), abi_minor_(abi_minor) {}
  void RecordThrow(const char* call, const char* what) const;
  const KeyScheme* inner_;
  std::string label_;
  uint32_t abi_minor_;
  std::string layout_;
  uint32_t tables_in_use_ = 0;
  bool values_as_given_ = false;
  KeyForm form_;
  mutable std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  mutable std::string first_failure_;
};

}  // namespace planb
