// What the fuzz targets share: a scratch directory per process, the built-in plugins' catalog, and a check that
// stops the run (an abort libFuzzer reports with its input) when an invariant does not hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "host/plugin_host/map_catalog.h"
#include "host/plugin_host/plugin_registry.h"

namespace planb::fuzz {

// Aborts with `what` on stderr when `ok` is false: a broken invariant is a finding like a crash.
void Check(bool ok, std::string_view what);

// A directory of this process's own under $TMPDIR, made on first use and removed at exit.
const std::string& ScratchDir();

// Writes `data` to `path` (replacing it); aborts when it cannot (the fuzzer's own disk, not the input).
void WriteFileOrDie(const std::string& path, const uint8_t* data, size_t size);

// The built-in plugins (PluginRegistry::DefaultDirectory) and a catalog with one map per store type plugin,
// named after the type ("state", "ranged", ...; '-' becomes '_'), its default scheme. Built once.
const PluginRegistry& Plugins();
const MapCatalog& Catalog();

}  // namespace planb::fuzz
