#include "support/node_process.h"

#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/test_env.h"

namespace planb::testing {

namespace fs = std::filesystem;

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= end) return condition();
    std::this_thread::sleep_for(5ms);  // the poll interval of a condition wait, not a synchronisation
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

std::string ServeProcess::WaitReady(std::chrono::milliseconds deadline) {
  std::error_code ec;
  const bool ready = WaitUntil([&] { return fs::exists(ready_file_, ec) || !running(); }, deadline);
  if (!ready || !fs::exists(ready_file_, ec)) return "";
  std::string endpoint = ReadFile(ready_file_);
  while (!endpoint.empty() && endpoint.back() == '\n') endpoint.pop_back();
  return endpoint;
}

int ServeProcess::Stop(std::chrono::milliseconds deadline) {
  if (pid_ < 0) return -1;
  ::kill(pid_, SIGTERM);
  if (!WaitUntil([&] { return !running(); }, deadline)) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

int ServeProcess::WaitForDeath(std::chrono::milliseconds deadline) {
  if (!WaitUntil([&] { return !running(); }, deadline)) return -1;
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

std::string Hex(const MDB_val& v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  const auto* bytes = static_cast<const unsigned char*>(v.mv_data);
  for (size_t i = 0; i < v.mv_size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

void Check(int rc, const std::string& what) {
  if (rc != 0) throw std::runtime_error(what + ": " + mdb_strerror(rc));
}

void DumpTable(MDB_txn* txn, MDB_dbi dbi, const std::string& label, std::ostringstream* out) {
  MDB_cursor* cursor = nullptr;
  Check(mdb_cursor_open(txn, dbi, &cursor), label);
  MDB_val key, value;
  for (int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    *out << label << ": " << Hex(key) << " = " << Hex(value) << "\n";
  }
  mdb_cursor_close(cursor);
}

void DumpShard(const std::string& dir, const std::string& map, std::ostringstream* out) {
  MDB_env* env = nullptr;
  Check(mdb_env_create(&env), dir);
  mdb_env_set_maxdbs(env, 64);
  // MDB_NOLOCK: the shard may be open in a serving node; this read-only dump takes no reader slot.
  const int rc = mdb_env_open(env, dir.c_str(), MDB_RDONLY | MDB_NOLOCK, 0644);
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
    MDB_dbi dbi = 0;
    Check(mdb_dbi_open(txn, table.c_str(), 0, &dbi), dir + " table " + table);
    DumpTable(txn, dbi, map + "/" + table, out);
  }
  mdb_txn_abort(txn);
  mdb_env_close(env);
}

}  // namespace

std::string DumpShards(const std::string& home) {
  std::vector<std::string> maps;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(home + "/shards", ec)) {
    if (entry.is_directory()) maps.push_back(entry.path().filename().string());
  }
  std::sort(maps.begin(), maps.end());
  std::ostringstream out;
  for (const std::string& map : maps) DumpShard(home + "/shards/" + map, map, &out);
  return out.str();
}

}  // namespace planb::testing
