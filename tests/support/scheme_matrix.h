// The key-scheme matrix every store type with a text key runs its suites under: each scheme, its clash-forcing
// and mixed-form settings, and value_dedup on each. One list, so that a new scheme or option reaches every suite.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace planb {

struct SchemeParam {
  const char* test_name;
  const char* scheme;
  const char* hash_bits;             // null: not given
  const char* direct_max = nullptr;  // hybrid, variable: null = not given
  bool value_dedup = false;

  // The options as MakeMapConfig takes them.
  std::vector<std::pair<std::string, std::string>> Options() const {
    std::vector<std::pair<std::string, std::string>> options;
    if (hash_bits != nullptr) options.emplace_back("hash_bits", hash_bits);
    if (direct_max != nullptr) options.emplace_back("direct_max", direct_max);
    if (value_dedup) options.emplace_back("value_dedup", "true");
    return options;
  }
  // The same options as lines of a map section of a config file.
  std::string ConfigLines() const {
    std::string lines;
    for (const auto& [name, value] : Options()) lines += name + " = " + value + "\n";
    return lines;
  }
};

inline void PrintTo(const SchemeParam& param, std::ostream* os) { *os << param.test_name; }

inline const SchemeParam kSchemeMatrix[] = {
    {"Hashed", "hashed", nullptr},
    {"Hashed8Bits", "hashed", "8"},  // most keys clash
    {"Direct", "direct", nullptr},
    {"Hybrid", "hybrid", nullptr},
    {"HybridAllHashed8Bits", "hybrid", "8", "0"},  // every key hashed, most clash
    {"HybridShortDirect", "hybrid", nullptr, "2"},  // keys of up to 2 bytes direct, longer hashed, one map
    {"LookupTable", "lookup_table", nullptr},
    {"LookupTable8Bits", "lookup_table", "8"},  // most keys clash in the index
    {"Variable", "variable", nullptr},
    {"VariableShortDirect8Bits", "variable", "8", "1"},  // 1-byte keys direct, others ids or hashed, clashing
    {"VariableAllIds8Bits", "variable", "8", "0"},       // every short key an id, index clashes
    // value_dedup on every scheme: values through the value table (short ones inline).
    {"HashedDedup", "hashed", nullptr, nullptr, true},
    {"Hashed8BitsDedup", "hashed", "8", nullptr, true},
    {"DirectDedup", "direct", nullptr, nullptr, true},
    {"HybridShortDirectDedup", "hybrid", nullptr, "2", true},
    {"LookupTable8BitsDedup", "lookup_table", "8", nullptr, true},
    {"VariableShortDirect8BitsDedup", "variable", "8", "1", true},
};

// The entries with value_dedup on.
inline std::vector<SchemeParam> DedupSchemes() {
  std::vector<SchemeParam> out;
  for (const SchemeParam& param : kSchemeMatrix) {
    if (param.value_dedup) out.push_back(param);
  }
  return out;
}

// "HybridShortDirect" -> "hybrid_short_direct": a matrix entry as part of a map name.
inline std::string SnakeName(const char* camel) {
  std::string out;
  for (const char* c = camel; *c != '\0'; ++c) {
    if (*c >= 'A' && *c <= 'Z') {
      if (!out.empty()) out += '_';
      out += static_cast<char>(*c - 'A' + 'a');
    } else {
      out += *c;
    }
  }
  return out;
}

// One map per matrix entry for store type `type`, named PREFIX_<entry> ("st_hashed", "st_lookup_table8_bits"...).
inline std::vector<std::string> SchemeMapNames(const std::string& prefix) {
  std::vector<std::string> names;
  for (const SchemeParam& param : kSchemeMatrix) names.push_back(prefix + "_" + SnakeName(param.test_name));
  return names;
}
inline std::string SchemeMapSections(const std::string& prefix, const std::string& type) {
  std::string text;
  for (const SchemeParam& param : kSchemeMatrix) {
    text += "[map." + prefix + "_" + SnakeName(param.test_name) + "]\ntype = " + type + "\nscheme = " + param.scheme +
            "\n" + param.ConfigLines();
  }
  return text;
}

inline std::string SchemeName(const ::testing::TestParamInfo<SchemeParam>& info) { return info.param.test_name; }

}  // namespace planb
