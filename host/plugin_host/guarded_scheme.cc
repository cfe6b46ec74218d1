#include "host/plugin_host/guarded_scheme.h"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "host/common/log_text.h"
#include "planb/key_form.h"

// Each method forwards under this guard: a throw, or an error returned (PrefixReturnedError), names the plugin
// and the call.
#define PLANB_GUARD_ERROR_CALL(call, expr)                                          \
  Code code;                                                                        \
  try {                                                                             \
    code = expr;                                                                    \
  } catch (const std::exception& e) {                                               \
    return ReportThrow(label_, "KeyScheme::" call, e.what(), error);                \
  } catch (...) {                                                                   \
    return ReportThrow(label_, "KeyScheme::" call, nullptr, error);                 \
  }                                                                                 \
  if (IsReturnedError(code)) [[unlikely]] {                                         \
    return PrefixReturnedError(label_, "KeyScheme::" call, code, error);            \
  }                                                                                 \
  return code;

// As PLANB_GUARD_ERROR_CALL, then a successful call's prefix (`prefix_size`) is bounded by LMDB's keys: the
// store type copies it into a 511-byte buffer. The compare is inline; only the report is out of line.
#define PLANB_GUARD_PREFIX_CALL(call, expr, prefix_size)                         \
  Code code;                                                                     \
  try {                                                                          \
    code = expr;                                                                 \
  } catch (const std::exception& e) {                                            \
    return ReportThrow(label_, "KeyScheme::" call, e.what(), error);             \
  } catch (...) {                                                                \
    return ReportThrow(label_, "KeyScheme::" call, nullptr, error);              \
  }                                                                              \
  if (code == Code::kOk && (prefix_size) > kMaxLmdbKeySize) [[unlikely]] {       \
    return ReportPrefixSize(label_, "KeyScheme::" call, (prefix_size), error);   \
  }                                                                              \
  if (IsReturnedError(code)) [[unlikely]] {                                      \
    return PrefixReturnedError(label_, "KeyScheme::" call, code, error);         \
  }                                                                              \
  return code;

#define PLANB_GUARD_SILENT_CALL(call, expr, fallback) \
  try {                                               \
    return expr;                                      \
  } catch (const std::exception& e) {                 \
    RecordThrow("KeyScheme::" call, e.what());        \
  } catch (...) {                                     \
    RecordThrow("KeyScheme::" call, nullptr);         \
  }                                                   \
  return fallback;

namespace planb {
namespace {

// The last failure of a call without an error channel on this thread (the scheme that failed, and what).
thread_local const GuardedScheme* failed_scheme = nullptr;
thread_local std::string failed_text;
// The scheme whose value plan was last destroyed on this thread after placing values without finishing.
thread_local const GuardedScheme* unfinished_plan_of = nullptr;

// Frees a plugin's plan. A throw from its Destroy cannot be reported (nothing returns): it is dropped, the plan's
// memory being all that is at stake.
template <typename Plan>
void DestroyInner(Plan* inner) {
  try {
    inner->Destroy();
  } catch (...) {
  }
}

// A scheme's answer that cannot be true: a prefix or stored key past the row it decoded or placed, or a prefix
// longer than LMDB's keys (a store type would read or copy past a buffer by it). kInternal naming the plugin and the
// call. Out of line: the callers' compares are all the hot paths pay.
[[gnu::cold]] [[gnu::noinline]] Code ReportRowParts(const std::string& label, const char* call, Bytes lmdb_key,
                                                   Bytes value, uint64_t prefix_size, uint64_t stored_key_size,
                                                   ErrorBuffer* error) {
  if (error != nullptr) {
    std::snprintf(error->message, ErrorBuffer::kCapacity,
                  "%s: %s reported a %llu-byte prefix and a %llu-byte stored key for a row of a %zu-byte key and a "
                  "%zu-byte value",
                  label.c_str(), call, static_cast<unsigned long long>(prefix_size),
                  static_cast<unsigned long long>(stored_key_size), lmdb_key.size, value.size);
  }
  return Code::kInternal;
}

[[gnu::cold]] [[gnu::noinline]] Code ReportPrefixSize(const std::string& label, const char* call, uint32_t size,
                                                     ErrorBuffer* error) {
  if (error != nullptr) {
    std::snprintf(error->message, ErrorBuffer::kCapacity, "%s: %s gave a prefix of %u bytes (LMDB keys hold %u)",
                  label.c_str(), call, size, kMaxLmdbKeySize);
  }
  return Code::kInternal;
}

// A scheme's MergePlan behind the same guard as its scheme.
class GuardedMergePlan final : public MergePlan {
 public:
  GuardedMergePlan(MergePlan* inner, const std::string& label) : inner_(inner), label_(label) {}

  Code PlaceRow(Bytes lmdb_key, Bytes value, PlacedRow* out, ErrorBuffer* error) override {
    try {
      const Code code = inner_->PlaceRow(lmdb_key, value, out, error);
      if (IsReturnedError(code)) [[unlikely]] return PrefixReturnedError(label_, "MergePlan::PlaceRow", code, error);
      if (code != Code::kOk) return code;
      if (out->prefix_size > lmdb_key.size || out->stored_key_size > value.size ||
          out->shard_prefix.size > kMaxLmdbKeySize) {
        return ReportRowParts(label_, "MergePlan::PlaceRow", lmdb_key, value,
                              std::max(out->prefix_size, out->shard_prefix.size), out->stored_key_size, error);
      }
      return Code::kOk;
    } catch (const std::exception& e) {
      return ReportThrow(label_, "MergePlan::PlaceRow", e.what(), error);
    } catch (...) {
      return ReportThrow(label_, "MergePlan::PlaceRow", nullptr, error);
    }
  }

  void Destroy() override {
    DestroyInner(inner_);
    delete this;
  }

 private:
  ~GuardedMergePlan() = default;

  MergePlan* const inner_;
  const std::string& label_;
};

// A scheme's ValuePlan behind the same guard as its scheme. It also notes a plan destroyed with references taken
// or dropped since its last successful Finish: those counts were never written (GuardedScheme::TakeUnfinishedPlan).
class GuardedValuePlan final : public ValuePlan {
 public:
  GuardedValuePlan(ValuePlan* inner, const GuardedScheme* scheme) : inner_(inner), scheme_(scheme) {}

  Code PlaceValue(Bytes batch_stored, uint8_t* scratch, Bytes* shard_stored, ErrorBuffer* error) override {
    owed_ = true;
    return Call("ValuePlan::PlaceValue", error,
                [&] { return inner_->PlaceValue(batch_stored, scratch, shard_stored, error); });
  }
  Code ReleaseValue(Bytes shard_stored, ErrorBuffer* error) override {
    owed_ = true;
    return Call("ValuePlan::ReleaseValue", error, [&] { return inner_->ReleaseValue(shard_stored, error); });
  }
  Code Finish(ErrorBuffer* error) override {
    const Code code = Call("ValuePlan::Finish", error, [&] { return inner_->Finish(error); });
    if (code == Code::kOk) owed_ = false;
    return code;
  }

  void Destroy() override {
    if (owed_) unfinished_plan_of = scheme_;
    DestroyInner(inner_);
    delete this;
  }

 private:
  ~GuardedValuePlan() = default;

  template <typename F>
  Code Call(const char* call, ErrorBuffer* error, F&& f) {
    Code code;
    try {
      code = f();
    } catch (const std::exception& e) {
      return ReportThrow(scheme_->label(), call, e.what(), error);
    } catch (...) {
      return ReportThrow(scheme_->label(), call, nullptr, error);
    }
    if (IsReturnedError(code)) [[unlikely]] return PrefixReturnedError(scheme_->label(), call, code, error);
    return code;
  }

  ValuePlan* const inner_;
  const GuardedScheme* const scheme_;
  bool owed_ = false;  // references taken or dropped since the last successful Finish: counts not written
};

}  // namespace

std::string ThrewText(const std::string& label, const char* call, const char* what) {
  return label + ": " + call +
         (what != nullptr ? std::string(" threw: ") + LogValue(what, ErrorBuffer::kCapacity)
                          : " threw a non-standard exception");
}

Code ReportThrow(const std::string& label, const char* call, const char* what, ErrorBuffer* error) {
  if (error != nullptr)
    std::snprintf(error->message, ErrorBuffer::kCapacity, "%s", ThrewText(label, call, what).c_str());
  return Code::kInternal;
}

Code PrefixReturnedError(const std::string& label, const char* call, Code code, ErrorBuffer* error) {
  if (error == nullptr) return code;
  const std::string given(error->message, strnlen(error->message, ErrorBuffer::kCapacity));
  if (given.compare(0, label.size(), label) == 0) return code;
  const std::string text = label + ": " + call + ": " +
                           (given.empty() ? std::string("returned ") + CodeName(code) + " without a message"
                                          : given);  // as the plugin wrote it: escaped where it is printed
  std::snprintf(error->message, ErrorBuffer::kCapacity, "%s", text.c_str());
  return code;
}

namespace {

// A plan from the inner scheme (`ask` makes the call) under the guard: handed back wrapped (`wrap`), or freed when
// it came with an error.
template <typename Plan, typename Ask, typename Wrap>
Code AskForPlan(const std::string& label, const char* call, Plan** plan, ErrorBuffer* error, Ask&& ask, Wrap&& wrap) {
  Plan* inner = nullptr;
  Code code = Code::kOk;
  try {
    code = ask(&inner);
  } catch (const std::exception& e) {
    code = ReportThrow(label, call, e.what(), error);
  } catch (...) {
    code = ReportThrow(label, call, nullptr, error);
  }
  if (IsReturnedError(code)) PrefixReturnedError(label, call, code, error);  // a thrown one is worded already
  if (inner == nullptr) return code;
  if (code != Code::kOk) {
    DestroyInner(inner);
    return code;
  }
  *plan = wrap(inner);
  return Code::kOk;
}

// `form` (the scheme's LookupForm) when it is valid and the scheme's own answers for a few keys (short, long, past
// LMDB's key limit, empty) are the form's: first candidate, stored key size and bytes. Otherwise none, so that a
// scheme that claims a form it does not write is still read right, through its own calls. The form's kinds need
// no I/O, so the scheme is asked with no table. Its exceptions reach the caller.
KeyForm CheckedForm(const KeyScheme& scheme, KeyForm form) {
  if (!key_form::Valid(form)) return KeyForm();
  // Lengths across the forms' bounds: the empty key, short and long ones, and both sides of the direct form's
  // longest key (kDirect, kHybrid).
  std::vector<std::string> samples = {"", "k", "planb", std::string(40, 'x'), std::string(300, 'y'),
                                      std::string(600, 'z')};
  if (form.kind != KeyFormKind::kHashed) {
    samples.emplace_back(form.max_key, 'm');
    samples.emplace_back(form.max_key + 1, 'n');
  }
  const Table none;
  std::string stored;
  for (const std::string& sample : samples) {
    const Bytes key(sample);
    if (!key_form::Computes(form, key)) continue;  // lookups ask the scheme for it: nothing to agree on
    Candidate theirs;
    Candidate ours;
    ErrorBuffer error;
    const Code code = scheme.FirstCandidate(none, key, Intent::kRead, &theirs, &error);
    if (code != key_form::FirstCandidate(form, key, &ours)) return KeyForm();
    if (code != Code::kOk) continue;
    if (theirs.certain != ours.certain || theirs.prefix.size != ours.prefix.size ||
        std::memcmp(theirs.prefix.bytes, ours.prefix.bytes, ours.prefix.size) != 0) {
      return KeyForm();
    }
    const uint32_t size = scheme.StoredKeySize(theirs.prefix, key);
    if (ours.certain) {  // a direct form: no stored key
      if (size != 0) return KeyForm();
      continue;
    }
    uint32_t matched = 0;
    if (size != key_form::HashedStoredKeySize(key)) return KeyForm();
    stored.assign(size, '\0');
    scheme.WriteStoredKey(theirs.prefix, key, reinterpret_cast<uint8_t*>(stored.data()));
    if (!key_form::MatchHashedStoredKey(Bytes(stored), key, &matched) || matched != size) return KeyForm();
  }
  return form;
}

}  // namespace

Status GuardedScheme::Create(const KeyScheme* inner, std::string label, uint32_t abi_minor,
                             std::unique_ptr<GuardedScheme>* out) {
  std::unique_ptr<GuardedScheme> scheme(new GuardedScheme(inner, std::move(label), abi_minor));
  const char* call = "KeyScheme::Layout";
  try {
    scheme->layout_ = std::string(inner->Layout().view());
    call = "KeyScheme::TablesInUse";
    scheme->tables_in_use_ = inner->TablesInUse();
    call = "KeyScheme::StoresValuesAsGiven";
    scheme->values_as_given_ = abi_minor >= 5 && inner->StoresValuesAsGiven();  // not in an older vtable
    call = "KeyScheme::LookupForm";
    if (abi_minor >= 6) scheme->form_ = CheckedForm(*inner, inner->LookupForm());  // not in an older vtable
  } catch (const std::exception& e) {
    return Status(Code::kInternal, ThrewText(scheme->label_, call, e.what()));
  } catch (...) {
    return Status(Code::kInternal, ThrewText(scheme->label_, call, nullptr));
  }
  *out = std::move(scheme);
  return Status::Ok();
}

void GuardedScheme::RecordThrow(const char* call, const char* what) const {
  std::string text = ThrewText(label_, call, what);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_failure_.empty()) first_failure_ = text;
  }
  failed_scheme = this;
  failed_text = std::move(text);
  failed_.store(true, std::memory_order_relaxed);
}

Code GuardedScheme::TakeFailure(ErrorBuffer* error) const {
  std::string text;
  if (failed_scheme == this) {
    text = std::move(failed_text);
    failed_scheme = nullptr;
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    text = first_failure_ + " (earlier)";
  }
  if (error != nullptr) std::snprintf(error->message, ErrorBuffer::kCapacity, "%s", text.c_str());
  return Code::kInternal;
}

bool GuardedScheme::TakeUnfinishedPlan() const {
  if (unfinished_plan_of != this) return false;
  unfinished_plan_of = nullptr;
  return true;
}

Code GuardedScheme::FirstCandidate(const Table& table, Bytes key, Intent intent, Candidate* out,
                                   ErrorBuffer* error) const {
  PLANB_GUARD_PREFIX_CALL("FirstCandidate", inner_->FirstCandidate(table, key, intent, out, error), out->prefix.size)
}

bool GuardedScheme::RowHasKey(Bytes key, Bytes value) const {
    PLANB_GUARD_SILENT_CALL("RowHasKey", inner_->RowHasKey(key, value), false)}

Code GuardedScheme::NextCandidate(const Table& table, Bytes key, Bytes after, KeyPrefix* prefix,
                                  ErrorBuffer* error) const {
  PLANB_GUARD_PREFIX_CALL("NextCandidate", inner_->NextCandidate(table, key, after, prefix, error), prefix->size)
}

Code GuardedScheme::NewPrefix(const Table& table, Bytes key, bool taken, KeyPrefix* prefix, ErrorBuffer* error) const {
  PLANB_GUARD_PREFIX_CALL("NewPrefix", inner_->NewPrefix(table, key, taken, prefix, error), prefix->size)
}

bool GuardedScheme::MatchStoredKey(const KeyPrefix& prefix, Bytes key, Bytes value, uint32_t* stored_key_size) const {
  // Before 7.5 the vtable has no such entry: the SDK's default makes the two calls, each guarded.
  if (abi_minor_ < 5) return KeyScheme::MatchStoredKey(prefix, key, value, stored_key_size);
  PLANB_GUARD_SILENT_CALL("MatchStoredKey", inner_->MatchStoredKey(prefix, key, value, stored_key_size), false)
}

uint32_t GuardedScheme::StoredKeySize(const KeyPrefix& prefix, Bytes key) const {
  PLANB_GUARD_SILENT_CALL("StoredKeySize", inner_->StoredKeySize(prefix, key), 0u)
}

void GuardedScheme::WriteStoredKey(const KeyPrefix& prefix, Bytes key, uint8_t* out) const {
  // A throw this thread has not reported yet (StoredKeySize's, whose fallback 0 sized `out`) fails the write
  // anyway: the room reserved cannot be trusted, so the plugin must not write into it (ASan caught the overflow).
  if (failed_scheme == this) return;
  try {
    inner_->WriteStoredKey(prefix, key, out);
  } catch (const std::exception& e) {
    RecordThrow("KeyScheme::WriteStoredKey", e.what());
  } catch (...) {
    RecordThrow("KeyScheme::WriteStoredKey", nullptr);
  }
}

Code GuardedScheme::DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                              uint32_t* stored_key_size, ErrorBuffer* error) const {
  Code code = Code::kOk;
  try {
    code = inner_->DecodeRow(table, lmdb_key, value, key, prefix_size, stored_key_size, error);
  } catch (const std::exception& e) {
    return ReportThrow(label_, "KeyScheme::DecodeRow", e.what(), error);
  } catch (...) {
    return ReportThrow(label_, "KeyScheme::DecodeRow", nullptr, error);
  }
  if (IsReturnedError(code)) [[unlikely]] return PrefixReturnedError(label_, "KeyScheme::DecodeRow", code, error);
  if (code != Code::kOk) return code;
  if (*prefix_size > lmdb_key.size || *stored_key_size > value.size) {
    return ReportRowParts(label_, "KeyScheme::DecodeRow", lmdb_key, value, *prefix_size, *stored_key_size, error);
  }
  return Code::kOk;
}

Code GuardedScheme::EncodeValue(const Table& table, Bytes value, uint8_t* scratch, Bytes* stored,
                                ErrorBuffer* error) const {
    PLANB_GUARD_ERROR_CALL("EncodeValue", inner_->EncodeValue(table, value, scratch, stored, error))}

Code GuardedScheme::DecodeValue(const Table& table, Bytes stored, Bytes* value, ErrorBuffer* error) const {
    PLANB_GUARD_ERROR_CALL("DecodeValue", inner_->DecodeValue(table, stored, value, error))}

Code GuardedScheme::ReleaseValue(const Table& table, Bytes stored, ErrorBuffer* error) const {
    PLANB_GUARD_ERROR_CALL("ReleaseValue", inner_->ReleaseValue(table, stored, error))}

Code GuardedScheme::SweepUnusedKeys(const Table& table, uint32_t suffix_size, uint64_t* removed,
                                    ErrorBuffer* error) const {
    PLANB_GUARD_ERROR_CALL("SweepUnusedKeys", inner_->SweepUnusedKeys(table, suffix_size, removed, error))}

Code GuardedScheme::PlanMerge(const Table& batch, const Table& shard, MergePlan** plan, ErrorBuffer* error) const {
  *plan = nullptr;
  if (abi_minor_ < 3) return Code::kOk;  // no PlanMerge in its vtable: the store places keys one by one
  return AskForPlan(
      label_, "KeyScheme::PlanMerge", plan, error,
      [&](MergePlan** inner) { return inner_->PlanMerge(batch, shard, inner, error); },
      [&](MergePlan* inner) { return new GuardedMergePlan(inner, label_); });
}

Code GuardedScheme::PlanValues(const Table& batch, const Table& shard, ValuePlan** plan, ErrorBuffer* error) const {
  *plan = nullptr;
  if (abi_minor_ < 4) return Code::kOk;  // no PlanValues in its vtable: the store copies values row by row
  return AskForPlan(
      label_, "KeyScheme::PlanValues", plan, error,
      [&](ValuePlan** inner) { return inner_->PlanValues(batch, shard, inner, error); },
      [&](ValuePlan* inner) { return new GuardedValuePlan(inner, this); });
}

}  // namespace planb
