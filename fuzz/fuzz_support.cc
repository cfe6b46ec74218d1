#include "fuzz/fuzz_support.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "host/common/file_util.h"
#include "host/config/config.h"

namespace planb::fuzz {

void Check(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

namespace {

void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz setup failed: %s\n", what.c_str());
  std::exit(1);
}

void RemoveScratch() { (void)RemoveTree(ScratchDir()); }

}  // namespace

const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/planb-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) Die("mkdtemp " + pattern);
    return pattern;
  }();
  static const bool registered = (std::atexit(RemoveScratch), true);
  (void)registered;
  return dir;
}

void WriteFileOrDie(const std::string& path, const uint8_t* data, size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) Die("open " + path);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) Die("write " + path);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

const PluginRegistry& Plugins() {
  static const PluginRegistry* registry = [] {
    auto* r = new PluginRegistry();
    Status s = r->LoadDirectories({PluginRegistry::DefaultDirectory()});
    if (!s.ok()) Die(s.message());
    if (!r->failures().empty()) Die("plugin not loaded: " + r->failures()[0].file + ": " + r->failures()[0].reason);
    return r;
  }();
  return *registry;
}

const MapCatalog& Catalog() {
  static const MapCatalog* catalog = [] {
    std::string ini = "home = " + ScratchDir() + "/home\n";
    for (const LoadedPlugin& p : Plugins().plugins()) {
      if (p.descriptor->kind != PluginKind::kStoreType) continue;
      std::string map = p.descriptor->name;
      for (char& c : map) c = c == '-' ? '_' : c;
      ini += "[map." + map + "]\ntype = " + p.descriptor->name + "\n";
    }
    Config config;
    Status s = ParseConfig("fuzz.ini", ini, ScratchDir(), &config);
    auto* c = new MapCatalog();
    if (s.ok()) s = c->Build(config, Plugins());
    if (!s.ok()) Die(s.message());
    return c;
  }();
  return *catalog;
}

}  // namespace planb::fuzz
