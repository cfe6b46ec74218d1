#include "host/storage/verifier_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "host/common/fault_point.h"
#include "host/plugin_host/map_plugins.h"
#include "host/plugin_host/plugin_registry.h"
#include "host/storage/lmdb_check.h"
#include "host/storage/verify_job.h"

namespace planb {
namespace {

void WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nobody to tell
    p += n;
    size -= static_cast<size_t>(n);
  }
}

[[noreturn]] void Fail(const Status& s, const std::string& strip) {
  // Paths inside the scratch directory mean nothing to the sender of the zip.
  std::string message = s.message();
  for (const std::string& prefix : {strip + "/data.mdb: ", strip + ": "}) {
    if (!strip.empty() && message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
  }
  const int32_t code = static_cast<int32_t>(s.code());
  WriteAll(kVerifyReportFd, &kVerifyError, 1);
  WriteAll(kVerifyReportFd, &code, sizeof(code));
  WriteAll(kVerifyReportFd, message.data(), message.size());
  ::_exit(1);
}

// The map's plugins, loaded from the files the node uses: kInternal when they no longer load (a plugin replaced
// on disk since the node started), which is no verdict on the file.
// Each file is loaded once, however many maps use it (`loaded`).
Status LoadMap(const VerifyMapJob& map, PluginRegistry* registry, std::set<std::string>* loaded,
               std::shared_ptr<const MapPlugins>* out) {
  for (const std::string* file : {&map.type_file, &map.scheme_file}) {
    if (file->empty() || !loaded->insert(*file).second) continue;
    const Status s = registry->LoadFile(*file);
    if (!s.ok()) return Status::Internal("the verifier could not load a plugin the node uses: " + s.message());
  }
  std::unique_ptr<MapPlugins> plugins;
  const Status s = MapPlugins::Create(map.config, *registry, &plugins);
  if (!s.ok()) return Status::Internal("the verifier could not set up the map as the node did: " + s.message());
  *out = std::move(plugins);
  return Status::Ok();
}

}  // namespace

int RunVerifierChild(int argc, char** argv) {
  if (::fcntl(kVerifyReportFd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "planb-verify: started by planb to check LMDB files from outside; not for direct use "
                 "(descriptor %d, its report pipe, is not open)\n",
                 kVerifyReportFd);
    return kVerifyUsageExit;
  }
  // The parent must never keep a verifier it lost (killed by kill -9): this one then dies with it.
  (void)::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // A crash is an expected verdict here, not a bug worth a core file.
  struct rlimit no_core = {0, 0};
  (void)::setrlimit(RLIMIT_CORE, &no_core);
  (void)::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // also keeps a piped core_pattern (apport, systemd) away
  // The crash itself is the verdict: a sanitizer's handler would turn it into a report and exit code 1
  // (docs/testing.md), so the default action is put back after the runtime installed its own.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) (void)::signal(sig, SIG_DFL);

  VerifyJob job;
  const Status parsed = DecodeVerifyJob(std::vector<std::string>(argv + 1, argv + argc), &job);
  if (!parsed.ok()) {
    std::fprintf(stderr, "planb-verify: %s\n", parsed.message().c_str());
    return kVerifyUsageExit;
  }
  PluginRegistry registry;
  std::set<std::string> loaded_files;
  for (uint32_t i = 0; i < job.maps.size(); ++i) {
    WriteAll(kVerifyReportFd, &kVerifyBegin, 1);
    WriteAll(kVerifyReportFd, &i, sizeof(i));
    std::shared_ptr<const MapPlugins> plugins;
    const Status loaded = LoadMap(job.maps[i], &registry, &loaded_files, &plugins);
    if (!loaded.ok()) Fail(loaded, "");
    // Tests: stand in for a walk that never ends (a B-tree whose branches loop), to prove the deadline. Stopped
    // rather than spinning, so a test can wait for this point with waitid(WSTOPPED).
    if (FaultPointActive("verify.hang")) {
      ::raise(SIGSTOP);
      while (true) ::pause();
    }
    const std::string dir = job.dir + "/" + job.maps[i].config.name;
    const Status s = CheckMap(dir, plugins);
    if (!s.ok()) Fail(s, dir);
  }
  // _exit: the plugins' static destructors and the LMDB handles have nothing to flush, and must not get a chance
  // to crash after the verdict.
  ::_exit(0);
}

}  // namespace planb
