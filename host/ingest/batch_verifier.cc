#include "host/ingest/batch_verifier.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "host/storage/map_env.h"

namespace planb {
namespace {

// What the child reports through the pipe (native byte order: both ends are this process image):
//   'B' <uint32 index>            about to check map `index` (so a crash can be blamed on it)
//   'E' <int32 code> <message>    map `index` failed; the message runs to end of pipe
// A clean exit with no 'E' means every map passed.
constexpr char kBegin = 'B';
constexpr char kError = 'E';

// A file with many named tables is not ours, but the walk should still reach every one to judge it.
constexpr unsigned kWalkMaxDbs = 256;

// ---- In the child: LMDB and plain code only (no logging, no sockets, no locks another thread may hold). ----

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

Status Lmdb(int rc, const std::string& what) {
  if (rc == MDB_SUCCESS) return Status::Ok();
  // Every LMDB failure while reading a private copy means the file is bad, whatever LMDB calls it.
  Code code = rc == ENOMEM ? Code::kFull : Code::kCorruption;
  return Status(code, what + ": " + mdb_strerror(rc));
}

struct EnvCloser {
  void operator()(MDB_env* env) const { mdb_env_close(env); }
};
struct TxnAborter {
  void operator()(MDB_txn* txn) const { mdb_txn_abort(txn); }
};
struct CursorCloser {
  void operator()(MDB_cursor* cursor) const { mdb_cursor_close(cursor); }
};

// Reads every row of `dbi` and touches every byte, so that a bad page crashes here rather than in the merge.
// A walk that yields more or fewer rows than the table's own count found a broken tree (possibly a loop).
Status WalkTable(MDB_txn* txn, MDB_dbi dbi, const std::string& table) {
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_stat(txn, dbi, &stat), "table '" + table + "'"));
  MDB_cursor* raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_cursor_open(txn, dbi, &raw), "table '" + table + "'"));
  std::unique_ptr<MDB_cursor, CursorCloser> cursor(raw);
  MDB_val key, value;
  uint64_t rows = 0;
  volatile unsigned char sink = 0;
  unsigned char sum = 0;
  int rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST);
  while (rc == MDB_SUCCESS) {
    if (++rows > stat.ms_entries) break;
    const auto* k = static_cast<const unsigned char*>(key.mv_data);
    const auto* v = static_cast<const unsigned char*>(value.mv_data);
    for (size_t i = 0; i < key.mv_size; ++i) sum ^= k[i];
    for (size_t i = 0; i < value.mv_size; ++i) sum += v[i];
    rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT);
  }
  sink = sum;
  (void)sink;
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return Lmdb(rc, "reading table '" + table + "'");
  if (rows != stat.ms_entries) {
    return Status::Corruption("table '" + table + "' says it holds " + std::to_string(stat.ms_entries) +
                              " rows, but a walk finds " + (rows > stat.ms_entries ? "more" : std::to_string(rows)));
  }
  return Status::Ok();
}

// LMDB maps the file and trusts the meta page: pages past the end of a short file SIGBUS when touched.
// Then walks the main table (whose keys name the tables) and every table in it.
Status CheckLmdbFile(const std::string& dir) {
  MDB_env* raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_create(&raw), "creating LMDB environment"));
  std::unique_ptr<MDB_env, EnvCloser> env(raw);
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_set_maxdbs(env.get(), kWalkMaxDbs), "LMDB"));
  // The scratch copy is private to this check: read-only with no lock file is enough.
  int rc = mdb_env_open(env.get(), dir.c_str(), MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK, 0644);
  if (rc == MDB_INVALID) return Status::Corruption("not an LMDB file");
  PLANB_RETURN_IF_ERROR(Lmdb(rc, "opening LMDB file"));

  MDB_envinfo info;
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_info(env.get(), &info), "LMDB"));
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_stat(env.get(), &stat), "LMDB"));
  const std::string file = dir + "/data.mdb";
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return Status::IOError(file + ": " + std::strerror(errno));
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  if (static_cast<uint64_t>(st.st_size) < needed) {
    return Status::Corruption("LMDB file is truncated: " + std::to_string(st.st_size) + " bytes, but its pages need " +
                              std::to_string(needed));
  }

  MDB_txn* txn_raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_txn_begin(env.get(), nullptr, MDB_RDONLY, &txn_raw), "LMDB read transaction"));
  std::unique_ptr<MDB_txn, TxnAborter> txn(txn_raw);
  MDB_dbi main = 0;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(txn.get(), nullptr, 0, &main), "main table"));
  PLANB_RETURN_IF_ERROR(WalkTable(txn.get(), main, "(main)"));
  std::vector<std::string> tables;
  {
    MDB_cursor* cursor_raw = nullptr;
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_cursor_open(txn.get(), main, &cursor_raw), "main table"));
    std::unique_ptr<MDB_cursor, CursorCloser> cursor(cursor_raw);
    MDB_val key, value;
    for (rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
      tables.emplace_back(static_cast<const char*>(key.mv_data), key.mv_size);
    }
    if (rc != MDB_NOTFOUND) return Lmdb(rc, "reading the main table");
  }
  for (const std::string& table : tables) {
    if (table.find('\0') != std::string::npos) return Status::Corruption("a table name holds a NUL byte");
    MDB_dbi dbi = 0;
    // A key of the main table that is not a table gives MDB_INCOMPATIBLE: Plan B keeps no rows there.
    PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(txn.get(), table.c_str(), 0, &dbi), "opening table '" + table + "'"));
    PLANB_RETURN_IF_ERROR(WalkTable(txn.get(), dbi, table));
  }
  return Status::Ok();
}

Status CheckMap(const std::string& dir, const std::shared_ptr<const MapPlugins>& plugins) {
  PLANB_RETURN_IF_ERROR(CheckLmdbFile(dir));
  // Only now that every page is known to be readable: the meta and tables the config expects.
  std::shared_ptr<MapEnv> env;
  return MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags | MDB_RDONLY | MDB_NOLOCK, &env);
}

[[noreturn]] void RunChild(int fd, const std::string& scratch_dir, const std::vector<std::string>& maps,
                           const std::vector<std::shared_ptr<const MapPlugins>>& plugins) {
  // A crash is an expected verdict here, not a bug worth a core file.
  struct rlimit no_core = {0, 0};
  (void)::setrlimit(RLIMIT_CORE, &no_core);
  (void)::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // also keeps a piped core_pattern (apport, systemd) away
  for (uint32_t i = 0; i < maps.size(); ++i) {
    WriteAll(fd, &kBegin, 1);
    WriteAll(fd, &i, sizeof(i));
    const std::string dir = scratch_dir + "/" + maps[i];
    Status s = CheckMap(dir, plugins[i]);
    if (!s.ok()) {
      // Paths inside the scratch directory mean nothing to the sender of the zip.
      std::string message = s.message();
      for (const std::string& prefix : {dir + "/data.mdb: ", dir + ": "}) {
        if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
      }
      const int32_t code = static_cast<int32_t>(s.code());
      WriteAll(fd, &kError, 1);
      WriteAll(fd, &code, sizeof(code));
      WriteAll(fd, message.data(), message.size());
      ::_exit(1);
    }
  }
  ::_exit(0);
}

// ---- In the parent ----

Status RunVerifier(const std::string& zip_path, const std::string& scratch_dir, const std::vector<std::string>& maps,
                   const std::vector<std::shared_ptr<const MapPlugins>>& plugins) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("verifier pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::IOError(std::string("forking the verifier: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(fds[1], scratch_dir, maps, plugins);
  }
  ::close(fds[1]);
  std::string report;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }

  // The last map the child started is the one it failed or crashed on.
  uint32_t current = 0;
  bool started = false;
  size_t pos = 0;
  while (pos + 1 + sizeof(uint32_t) <= report.size() && report[pos] == kBegin) {
    std::memcpy(&current, report.data() + pos + 1, sizeof(current));
    started = true;
    pos += 1 + sizeof(uint32_t);
  }
  const std::string map = started && current < maps.size() ? maps[current] : "?";
  const std::string where = zip_path + ": map '" + map + "'";
  if (WIFSIGNALED(wstatus)) {
    return Status::Corruption(where + ": LMDB file is corrupt (verifier killed by signal " +
                              std::to_string(WTERMSIG(wstatus)) + ")");
  }
  if (pos + 1 + sizeof(int32_t) <= report.size() && report[pos] == kError) {
    int32_t code = 0;
    std::memcpy(&code, report.data() + pos + 1, sizeof(code));
    std::string message = report.substr(pos + 1 + sizeof(code));
    return Status(static_cast<Code>(code), where + ": " + message);
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || pos != report.size()) {
    return Status::Internal(zip_path + ": the verifier ended without a verdict (status " + std::to_string(wstatus) +
                            ")");
  }
  return Status::Ok();
}

Status Verify(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
              const UnzipLimits& limits) {
  std::vector<std::string> maps;
  PLANB_RETURN_IF_ERROR(UnzipBatch(zip_path, scratch_dir, limits, &maps));
  std::vector<std::shared_ptr<const MapPlugins>> plugins(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    Status s = runtime.catalog().Get(maps[i], &plugins[i]);
    if (!s.ok()) {
      return Status::Invalid(zip_path + ": map '" + maps[i] + "' is not configured on this node (" + s.message() + ")");
    }
  }
  if (maps.empty()) return Status::Ok();
  return RunVerifier(zip_path, scratch_dir, maps, plugins);
}

}  // namespace

Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits) {
  struct stat st;
  if (::lstat(scratch_dir.c_str(), &st) == 0) {
    // Not ours: never removed. A crashed verifier's leftovers are for the caller to clear at start-up.
    return Status::Invalid(scratch_dir + ": already exists (verifying " + zip_path + ")");
  }
  Status s = Verify(runtime, zip_path, scratch_dir, limits);
  Status removed = RemoveTree(scratch_dir);
  if (s.ok()) return removed;
  return s;
}

}  // namespace planb
