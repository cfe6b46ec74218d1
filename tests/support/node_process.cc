#include "support/node_process.h"

#include <fcntl.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "host/common/hex.h"
#include "host/ingest/tombstones.h"
#include "host/storage/content_version.h"
#include "host/maintain/maintenance_marks.h"
#include "support/test_env.h"

namespace planb::testing {

namespace fs = std::filesystem;

namespace {

// A descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

constexpr uint32_t kChanges = IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
                              IN_ATTRIB | IN_DELETE_SELF;

}  // namespace

bool WaitUntil(const std::function<bool()>& condition, const std::vector<std::string>& watched,
               std::chrono::milliseconds deadline, pid_t pid) {
  const auto end = std::chrono::steady_clock::now() + deadline * TestTimeScale();
  // Watches first, then the check: a change between the two still wakes the wait below.
  Fd changes{::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)};
  if (changes.fd < 0) throw std::runtime_error("inotify_init1 failed");
  for (const std::string& path : watched) {
    std::error_code ec;
    const std::string target = fs::exists(path, ec) ? path : fs::path(path).parent_path().string();
    if (::inotify_add_watch(changes.fd, target.c_str(), kChanges) < 0) {
      throw std::runtime_error("cannot watch " + target);
    }
  }
  Fd exited{pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)) : -1};
  while (!condition()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return condition();
    pollfd fds[2] = {{changes.fd, POLLIN, 0}, {exited.fd, POLLIN, 0}};
    ::poll(fds, exited.fd >= 0 ? 2 : 1, static_cast<int>(left.count()));
    char events[4096];
    while (::read(changes.fd, events, sizeof events) > 0) {
    }
    if (exited.fd >= 0 && (fds[1].revents & POLLIN)) {  // ended: nothing more to wait for from it
      ::close(exited.fd);
      exited.fd = -1;
    }
  }
  return true;
}

ServeProcess::~ServeProcess() { Kill(); }

void ServeProcess::Start(const std::string& config, const std::string& home, const std::string& bind,
                         const std::vector<std::string>& env) {
  Kill();
  ready_file_ = home + ".ready";
  log_file_ = home + ".log";
  fs::remove(ready_file_);
  const std::string binary = PLANB_BINARY;
  std::vector<std::string> args = {binary,   "--config",     config,     "--home", home, "serve",
                                   "--bind", bind,           "--ready-file", ready_file_};
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int log = ::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    if (log < 0 || in < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    for (const std::string& entry : env) ::putenv(const_cast<char*>(entry.c_str()));
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
}

bool ServeProcess::Reap(int options) {
  if (pid_ < 0) return true;
  const pid_t done = ::waitpid(pid_, &status_, options);
  if (done == pid_) {
    pid_ = -1;
    return true;
  }
  return false;
}

bool ServeProcess::running() { return !Reap(WNOHANG); }

bool ServeProcess::WaitForExit(std::chrono::milliseconds deadline) {
  if (pid_ < 0) return true;
  return WaitUntil([&] { return !running(); }, {}, deadline, pid_);
}

std::string ServeProcess::WaitReady(std::chrono::milliseconds deadline) {
  std::error_code ec;
  const bool ready =
      WaitUntil([&] { return fs::exists(ready_file_, ec) || !running(); }, {ready_file_}, deadline, pid_);
  if (!ready || !fs::exists(ready_file_, ec)) return "";
  std::string endpoint = ReadFile(ready_file_);
  while (!endpoint.empty() && endpoint.back() == '\n') endpoint.pop_back();
  return endpoint;
}

int ServeProcess::Stop(std::chrono::milliseconds deadline) {
  if (pid_ < 0) return -1;
  ::kill(pid_, SIGTERM);
  if (!WaitForExit(deadline)) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

int ServeProcess::WaitForDeath(std::chrono::milliseconds deadline) {
  if (!WaitForExit(deadline)) return -1;
  return WIFSIGNALED(status_) ? WTERMSIG(status_) : 0;
}

void ServeProcess::Kill() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  Reap(0);
}

std::string ServeProcess::log() const {
  std::error_code ec;
  return fs::exists(log_file_, ec) ? ReadFile(log_file_) : "";
}

namespace {

void Check(int rc, const std::string& what) {
  if (rc != 0) throw std::runtime_error(what + ": " + mdb_strerror(rc));
}

std::string_view View(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

// What a dump of a shard shows: its rows, or which batches it counts.
enum class DumpWhat { kRows, kBatchIds };

// kRows: every row but the content version (meta content_version); kBatchIds: the keys of `batches` (the merge
// times differ between nodes) and the content version.
void DumpTable(MDB_txn* txn, MDB_dbi dbi, const std::string& table, const std::string& label, DumpWhat what,
               std::ostringstream* out) {
  MDB_cursor* cursor = nullptr;
  Check(mdb_cursor_open(txn, dbi, &cursor), label);
  MDB_val key, value;
  std::vector<std::string> tombstones;
  for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    const bool version = table == "meta" && View(key) == kContentVersionKey;
    // When this node's maintenance last ran is its own business, like merge times: not part of the rows.
    const bool mark = table == "meta" && (View(key) == kLastCondensedKey || View(key) == kLastReclaimedKey);
    // A tombstone's first 8 bytes are when this node merged the deletion, its own business too; the rest (the
    // deletion's time and expression) is the same on every node.
    // Keyed by batch id, which depends on who ran the deletion (a reference home's own ids): shown by what they
    // do, sorted, after the loop.
    const bool tombstone = table == kTombstonesTableName && value.mv_size >= 8;
    if (what == DumpWhat::kRows && tombstone) {
      tombstones.push_back(label + ": " + HexString(View(value).substr(8)) + "\n");
    } else if (what == DumpWhat::kRows && !version && !mark) {
      *out << label << ": " << HexString(View(key)) << " = " << HexString(View(value)) << "\n";
    } else if (what == DumpWhat::kBatchIds && version) {
      *out << label << ": " << View(key) << " = " << View(value) << "\n";
    } else if (what == DumpWhat::kBatchIds && table == kBatchesTableName) {
      *out << label << ": " << View(key) << "\n";
    }
  }
  mdb_cursor_close(cursor);
  std::sort(tombstones.begin(), tombstones.end());
  for (const std::string& line : tombstones) *out << line;
}

void DumpShard(const std::string& dir, const std::string& map, DumpWhat what, std::ostringstream* out) {
  MDB_env* env = nullptr;
  Check(mdb_env_create(&env), dir);
  mdb_env_set_maxdbs(env, 64);
  // A reader slot in the shard's lock file: a serving node may write the shard meanwhile (its own maintenance
  // passes), and without the slot it could reuse pages this dump is reading (with MDB_NOLOCK a dump once walked
  // such pages in a loop until the test ran out of memory).
  const int rc = mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0644);
  if (rc != 0) {
    mdb_env_close(env);
    Check(rc, dir);
  }
  MDB_txn* txn = nullptr;
  Check(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), dir);
  MDB_dbi main = 0;
  Check(mdb_dbi_open(txn, nullptr, 0, &main), dir);
  std::vector<std::string> tables;
  MDB_cursor* cursor = nullptr;
  Check(mdb_cursor_open(txn, main, &cursor), dir);
  MDB_val key, value;
  for (int r = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); r == 0;
       r = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    tables.emplace_back(static_cast<const char*>(key.mv_data), key.mv_size);
  }
  mdb_cursor_close(cursor);
  for (const std::string& table : tables) {
    // Which batches a node merged, and when, depends on its uploads, not on its rows (a reference loaded
    // elsewhere has other batch ids): the rows dump leaves them out, DumpBatchIds compares them.
    if (what == DumpWhat::kRows && table == kBatchesTableName) continue;
    // Identity tombstones (host/ingest/tombstones.h) depend on the order rows met a deletion by value: a node may
    // hold one for a row that lost to a newer value before the deletion came, another none. Either shadows only
    // rows older than a row the shard holds or took, so the rows agree, which is what the dump compares.
    if (what == DumpWhat::kRows && table == kShadowedTableName) continue;
    if (what == DumpWhat::kBatchIds && table != kBatchesTableName && table != "meta") continue;
    MDB_dbi dbi = 0;
    Check(mdb_dbi_open(txn, table.c_str(), 0, &dbi), dir + " table " + table);
    DumpTable(txn, dbi, table, map + "/" + table, what, out);
  }
  mdb_txn_abort(txn);
  mdb_env_close(env);
}

std::string DumpShardsOf(const std::string& home, DumpWhat what) {
  std::vector<std::string> maps;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(home + "/shards", ec)) {
    // Dot names are not shards: a compaction's copy being written (.<map>.compact), a deletion's leftover. A
    // serving node maintains its shards by itself, so one may appear at any time.
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.front() != '.') maps.push_back(name);
  }
  std::sort(maps.begin(), maps.end());
  std::ostringstream out;
  for (const std::string& map : maps) DumpShard(home + "/shards/" + map, map, what, &out);
  return out.str();
}

}  // namespace

std::string DumpShards(const std::string& home) { return DumpShardsOf(home, DumpWhat::kRows); }

std::string DumpBatchIds(const std::string& home) { return DumpShardsOf(home, DumpWhat::kBatchIds); }

}  // namespace planb::testing
