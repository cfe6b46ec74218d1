// The two key-form kinds that tag a direct form and a hashed one, as a parameter list for suites that check
// both (the SDK's form functions, the host's guard on them).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "planb/key_scheme.h"

namespace planb {

inline auto TaggedFormKinds() { return ::testing::Values(KeyFormKind::kHybrid, KeyFormKind::kVariable); }

inline std::string TaggedFormKindName(const ::testing::TestParamInfo<KeyFormKind>& info) {
  return info.param == KeyFormKind::kHybrid ? "Hybrid" : "Variable";
}

}  // namespace planb
