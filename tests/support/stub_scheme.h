// A KeyScheme whose every call fails (kInternal) or answers nothing, for tests of the host's guard that need a
// scheme with one or two working calls: derive, and override those.
#pragma once

#include "planb/key_scheme.h"

namespace planb::testing {

class StubScheme : public KeyScheme {
 public:
  Code FirstCandidate(const Table&, Bytes, Intent, Candidate*, ErrorBuffer*) const override { return Code::kInternal; }
  bool RowHasKey(Bytes, Bytes) const override { return false; }
  Code NextCandidate(const Table&, Bytes, Bytes, KeyPrefix*, ErrorBuffer*) const override { return Code::kInternal; }
  Code NewPrefix(const Table&, Bytes, bool, KeyPrefix*, ErrorBuffer*) const override { return Code::kInternal; }
  uint32_t StoredKeySize(const KeyPrefix&, Bytes) const override { return 0; }
  void WriteStoredKey(const KeyPrefix&, Bytes, uint8_t*) const override {}
  Code DecodeRow(const Table&, Bytes, Bytes, Bytes*, uint32_t*, uint32_t*, ErrorBuffer*) const override {
    return Code::kInternal;
  }
  Code EncodeValue(const Table&, Bytes, uint8_t*, Bytes*, ErrorBuffer*) const override { return Code::kInternal; }
  Code DecodeValue(const Table&, Bytes, Bytes*, ErrorBuffer*) const override { return Code::kInternal; }
  Code ReleaseValue(const Table&, Bytes, ErrorBuffer*) const override { return Code::kInternal; }
  Code SweepUnusedKeys(const Table&, uint32_t, uint64_t*, ErrorBuffer*) const override { return Code::kInternal; }
  Bytes Layout() const override { return Bytes("stub"); }
  uint32_t TablesInUse() const override { return 0; }
};

}  // namespace planb::testing
