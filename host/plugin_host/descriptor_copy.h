// A plugin's descriptor as this host reads it, whatever minor SDK version the plugin was built against: the
// members the plugin's struct has are copied, newer ones keep their defaults; its option and field arrays are
// copied element by element at the plugin's stride. Everything is checked here, once, at load: the rest of the
// host reads only the copy. Thread-safety: immutable after Copy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "planb/plugin.h"
#include "planb/status.h"

namespace planb {

class DescriptorCopy {
 public:
  // Reads `raw` (the plugin's own, from file `path`): refuses another major version or a newer minor (naming the
  // plugin, its version and the host's), a descriptor too short for its version, and anything incomplete or
  // malformed: kinds, names, create/destroy, tables, fields (an unknown kind or member, a duplicate name).
  static Status Copy(const PluginDescriptor* raw, const std::string& path, std::unique_ptr<DescriptorCopy>* out);

  const PluginDescriptor& descriptor() const { return descriptor_; }

 private:
  DescriptorCopy() = default;
  PluginDescriptor descriptor_;
  std::vector<OptionSpec> options_;
  std::vector<FieldSpec> fields_;
};

// "7.1"
std::string AbiVersionText(uint32_t major, uint32_t minor);

}  // namespace planb
