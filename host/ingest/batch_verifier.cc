#include "host/ingest/batch_verifier.h"

#include <fcntl.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/common/fault_point.h"
#include "host/common/file_util.h"
#include "host/storage/map_env.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

using Clock = std::chrono::steady_clock;

// What the child reports through the pipe (native byte order: both ends are this process image):
//   'B' <uint32 index>            about to check map `index` (so a crash or a hang can be blamed on it)
//   'E' <int32 code> <message>    map `index` failed; the message runs to end of pipe
// A clean exit with no 'E' means every map passed.
constexpr char kBegin = 'B';
constexpr char kError = 'E';

// A file with many named tables is not ours, but the walk should still reach every one to judge it.
constexpr unsigned kWalkMaxDbs = 256;

// The child's pipe after it has closed everything else (0-2 stay: nothing in the child uses them).
constexpr int kChildPipeFd = 3;

// The deadline grows by one second per this many bytes of extracted LMDB files.
constexpr uint64_t kBytesPerDeadlineSecond = uint64_t{16} << 20;

// ---- In the child: LMDB, the maps' plugins and plain code only (no logging, no sockets, no locks). ----

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

// What the whole file can hold, to judge a table's own counts by.
struct FileShape {
  uint64_t pages = 0;  // last page number + 1
  uint64_t page_size = 0;
};

// A table's counts come from its (possibly forged) root record; the walk below trusts ms_entries as its bound,
// so an absurd count is refused before walking. A leaf node is at least a 2-byte offset plus an 8-byte header,
// so no leaf page holds page_size / 8 rows. (DUPFIXED sub-pages pack smaller values; Plan B has no DUPSORT
// tables, and for one the bound is left out rather than risk refusing a sound file.)
Status CheckCounts(MDB_txn* txn, MDB_dbi dbi, const MDB_stat& stat, const FileShape& shape, const std::string& table) {
  const uint64_t counts[] = {stat.ms_branch_pages, stat.ms_leaf_pages, stat.ms_overflow_pages};
  for (uint64_t count : counts) {
    if (count > shape.pages) {
      return Status::Corruption("table '" + table + "' says it uses " + std::to_string(count) +
                                " pages, more than the file's " + std::to_string(shape.pages));
    }
  }
  unsigned flags = 0;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_flags(txn, dbi, &flags), "table '" + table + "'"));
  if ((flags & MDB_DUPSORT) != 0) return Status::Ok();
  const uint64_t most = static_cast<uint64_t>(stat.ms_leaf_pages) * (shape.page_size / 8);
  if (stat.ms_entries > most) {
    return Status::Corruption("table '" + table + "' says it holds " + std::to_string(stat.ms_entries) +
                              " rows, more than its " + std::to_string(stat.ms_leaf_pages) +
                              " leaf pages can hold");
  }
  return Status::Ok();
}

// Reads every row of `dbi` and touches every byte, so that a bad page crashes here rather than in the merge.
// A walk that yields more or fewer rows than the table's own count found a broken tree (possibly a loop).
Status WalkTable(MDB_txn* txn, MDB_dbi dbi, const std::string& table, const FileShape& shape) {
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_stat(txn, dbi, &stat), "table '" + table + "'"));
  PLANB_RETURN_IF_ERROR(CheckCounts(txn, dbi, stat, shape, table));
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
  // LMDB maps as much as the meta page's map size (or its last page) asks: only a forged one fails the mmap.
  if (rc == ENOMEM) return Status::Corruption(std::string("opening LMDB file: unusable map size (") +
                                              mdb_strerror(rc) + ")");
  PLANB_RETURN_IF_ERROR(Lmdb(rc, "opening LMDB file"));

  MDB_envinfo info;
  MDB_stat stat;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_info(env.get(), &info), "LMDB"));
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_env_stat(env.get(), &stat), "LMDB"));
  const std::string file = dir + "/data.mdb";
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return Status::IOError(file + ": " + std::strerror(errno));
  const FileShape shape{static_cast<uint64_t>(info.me_last_pgno) + 1, stat.ms_psize};
  const uint64_t needed = shape.pages * shape.page_size;
  if (static_cast<uint64_t>(st.st_size) < needed) {
    return Status::Corruption("LMDB file is truncated: " + std::to_string(st.st_size) + " bytes, but its pages need " +
                              std::to_string(needed));
  }

  MDB_txn* txn_raw = nullptr;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_txn_begin(env.get(), nullptr, MDB_RDONLY, &txn_raw), "LMDB read transaction"));
  std::unique_ptr<MDB_txn, TxnAborter> txn(txn_raw);
  MDB_dbi main = 0;
  PLANB_RETURN_IF_ERROR(Lmdb(mdb_dbi_open(txn.get(), nullptr, 0, &main), "main table"));
  PLANB_RETURN_IF_ERROR(WalkTable(txn.get(), main, "(main)", shape));
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
    PLANB_RETURN_IF_ERROR(WalkTable(txn.get(), dbi, table, shape));
  }
  return Status::Ok();
}

// Every data row through the store type's decoder: a row the merge cannot read would fail every merge of the
// batch, for ever. The plugin gets a cursor of its own (it may move it), apart from the one that walks.
Status DecodeRows(const MapEnv& env) {
  const std::string type = env.plugins().config().type;
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor walk;
  PLANB_RETURN_IF_ERROR(walk.Open(txn.get(), env.data()));
  Cursor plugin_cursor;
  PLANB_RETURN_IF_ERROR(plugin_cursor.Open(txn.get(), env.data()));
  const Table table = env.MakeTable(txn.get(), plugin_cursor.get());
  const Store& store = *env.plugins().store();
  ErrorBuffer error;
  uint64_t number = 0;
  MDB_val k, v;
  int rc = mdb_cursor_get(walk.get(), &k, &v, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(walk.get(), &k, &v, MDB_NEXT)) {
    ++number;
    Row row;
    error.message[0] = '\0';
    const Code code = store.DecodeRow(table, Bytes(k), Bytes(v), &row, &error);
    if (code != Code::kOk) {
      return Status::Corruption("row " + std::to_string(number) + " of the data table is not a " + type +
                                " row: " + Status::FromPlugin(code, error).message());
    }
  }
  if (rc != MDB_NOTFOUND) return Lmdb(rc, "reading the data table");
  return Status::Ok();
}

Status CheckMap(const std::string& dir, const std::shared_ptr<const MapPlugins>& plugins) {
  PLANB_RETURN_IF_ERROR(CheckLmdbFile(dir));
  // Only now that every page is known to be readable: the meta and tables the config expects, then the rows.
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(
      MapEnv::Open(dir, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags | MDB_RDONLY | MDB_NOLOCK, &env));
  return DecodeRows(*env);
}

// Leaves the child only fds 0-2 and the pipe, moved to kChildPipeFd: an inherited descriptor would keep the
// parent's flocks (home, staging) or sockets alive for as long as the child runs. False when the pipe is lost.
bool KeepOnlyPipe(int fd) {
  if (fd != kChildPipeFd) {
    if (::dup2(fd, kChildPipeFd) < 0) return false;
    if (fd < kChildPipeFd) ::close(fd);  // the parent ran with a standard descriptor closed
  }
  if (::close_range(kChildPipeFd + 1, ~0U, 0) != 0) {
    // Kernels before 5.9: one close per possible descriptor.
    struct rlimit limit;
    rlim_t last = 1 << 16;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) last = limit.rlim_cur;
    for (rlim_t other = kChildPipeFd + 1; other < last; ++other) ::close(static_cast<int>(other));
  }
  return true;
}

[[noreturn]] void RunChild(int fd, const std::string& scratch_dir, const std::vector<std::string>& maps,
                           const std::vector<std::shared_ptr<const MapPlugins>>& plugins) {
  if (!KeepOnlyPipe(fd)) ::_exit(2);
  fd = kChildPipeFd;
  // A crash is an expected verdict here, not a bug worth a core file.
  struct rlimit no_core = {0, 0};
  (void)::setrlimit(RLIMIT_CORE, &no_core);
  (void)::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // also keeps a piped core_pattern (apport, systemd) away
  for (uint32_t i = 0; i < maps.size(); ++i) {
    WriteAll(fd, &kBegin, 1);
    WriteAll(fd, &i, sizeof(i));
    // Tests: stand in for a walk that never ends (a B-tree whose branches loop), to prove the deadline. Stopped
    // rather than spinning, so a test can wait for this point with waitid(WSTOPPED).
    if (FaultPointActive("verify.hang")) {
      ::raise(SIGSTOP);
      while (true) ::pause();
    }
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

int64_t MillisecondsLeft(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

// "30 s", "30.5 s", "0.05 s".
std::string FormatSeconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  std::string s = text;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + " s";
}

// Appends what the child writes until it closes the pipe (true) or `deadline` passes (false).
bool ReadReport(int fd, Clock::time_point deadline, std::string* report) {
  char buffer[4096];
  while (true) {
    const int64_t left = MillisecondsLeft(deadline);
    if (left <= 0) return false;
    struct pollfd ready = {fd, POLLIN, 0};
    const int n_ready = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left + 1, INT_MAX)));
    if (n_ready == 0 || (n_ready < 0 && errno == EINTR)) continue;
    if (n_ready < 0) return true;  // cannot wait on the pipe: the reaping below still keeps the deadline
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return true;
    report->append(buffer, static_cast<size_t>(n));
  }
}

enum class Reaped { kDone, kDeadline, kLost };

// The child has closed its pipe, so it is exiting; waits for that until `deadline`, without blocking past it.
Reaped ReapBefore(pid_t pid, Clock::time_point deadline, int* wstatus) {
  long pause_ns = 100 * 1000;
  while (true) {
    const pid_t reaped = ::waitpid(pid, wstatus, WNOHANG);
    if (reaped == pid) return Reaped::kDone;
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0) return Reaped::kLost;  // reaped elsewhere (SIGCHLD ignored): no exit status to trust
    if (MillisecondsLeft(deadline) <= 0) return Reaped::kDeadline;
    const struct timespec pause = {0, pause_ns};
    ::nanosleep(&pause, nullptr);
    pause_ns = std::min(pause_ns * 2, 10L * 1000 * 1000);
  }
}

Status RunVerifier(const std::string& zip_path, const std::string& scratch_dir, const std::vector<std::string>& maps,
                   const std::vector<std::shared_ptr<const MapPlugins>>& plugins, int64_t deadline_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("verifier pipe: ") + std::strerror(errno));
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
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
  const bool closed = ReadReport(fds[0], deadline, &report);
  ::close(fds[0]);
  int wstatus = 0;
  const Reaped reaped = closed ? ReapBefore(pid, deadline, &wstatus) : Reaped::kDeadline;
  if (reaped == Reaped::kDeadline) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }

  // The last map the child started is the one it failed, crashed or hung on.
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
  if (reaped == Reaped::kDeadline) {
    return Status::Corruption(where + ": verification did not finish within " + FormatSeconds(deadline_ms) +
                              " (corrupt B-tree?)");
  }
  if (reaped == Reaped::kDone && WIFSIGNALED(wstatus)) {
    return Status::Corruption(where + ": LMDB file is corrupt (verifier killed by signal " +
                              std::to_string(WTERMSIG(wstatus)) + ")");
  }
  if (pos + 1 + sizeof(int32_t) <= report.size() && report[pos] == kError) {
    int32_t code = 0;
    std::memcpy(&code, report.data() + pos + 1, sizeof(code));
    std::string message = report.substr(pos + 1 + sizeof(code));
    return Status(static_cast<Code>(code), where + ": " + message);
  }
  if (reaped != Reaped::kDone || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || pos != report.size()) {
    return Status::Internal(zip_path + ": the verifier ended without a verdict (" +
                            (reaped == Reaped::kDone ? "status " + std::to_string(wstatus) : "not reaped") + ")");
  }
  return Status::Ok();
}

}  // namespace

Status VerifyExtractedBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& dir,
                            const std::vector<std::string>& maps, const VerifyOptions& options) {
  std::vector<std::shared_ptr<const MapPlugins>> plugins(maps.size());
  uint64_t extracted = 0;
  for (size_t i = 0; i < maps.size(); ++i) {
    Status s = catalog.Get(maps[i], &plugins[i]);
    if (!s.ok()) {
      return Status::Invalid(zip_path + ": map '" + maps[i] + "' is not configured on this node (" + s.message() + ")");
    }
    struct stat st;
    const std::string file = dir + "/" + maps[i] + "/data.mdb";
    if (::stat(file.c_str(), &st) != 0) return Status::IOError(file + ": " + std::strerror(errno));
    extracted += static_cast<uint64_t>(st.st_size);
  }
  if (maps.empty()) return Status::Ok();
  const int64_t deadline_ms =
      options.base_deadline_ms + static_cast<int64_t>(extracted / (kBytesPerDeadlineSecond / 1000));
  return RunVerifier(zip_path, dir, maps, plugins, deadline_ms);
}

Status VerifyBatch(const Runtime& runtime, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options) {
  return VerifyBatch(runtime.catalog(), zip_path, scratch_dir, limits, options);
}

Status VerifyBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& scratch_dir,
                   const UnzipLimits& limits, const VerifyOptions& options) {
  struct stat st;
  if (::lstat(scratch_dir.c_str(), &st) == 0) {
    // Not ours: never removed. A crashed verifier's leftovers are for the caller to clear at start-up.
    return Status::Invalid(scratch_dir + ": already exists (verifying " + zip_path + ")");
  }
  std::vector<std::string> maps;
  Status s = UnzipBatch(zip_path, scratch_dir, limits, &maps);
  if (s.ok()) s = VerifyExtractedBatch(catalog, zip_path, scratch_dir, maps, options);
  Status removed = RemoveTree(scratch_dir);
  if (s.ok()) return removed;
  return s;
}

}  // namespace planb
