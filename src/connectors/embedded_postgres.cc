#include "sluice/connectors/embedded_postgres.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kLogTailLines = 25;
constexpr int kPortAttempts = 5;
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kOrphanShutdownGrace = std::chrono::seconds(3);

// Asks the kernel for a free loopback port. Another process may take it before the server binds
// it; LaunchAndWait notices and the caller retries with a new port.
int FindFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// True if `pid` is a running (not zombie) process named postgres. A live process with another name
// holds a reused pid, and the server itself treats such a lock file as stale.
bool IsLivePostgres(pid_t pid) {
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return false;
  // "<pid> (<comm>) <state> ...": comm may contain spaces and parentheses, the state follows the last ')'.
  size_t open = line.find('(');
  size_t close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size()) return false;
  std::string name = line.substr(open + 1, close - open - 1);
  char state = line[close + 2];
  return name.rfind("postgres", 0) == 0 && state != 'Z' && state != 'X';
}

std::string TailOfFile(const std::string& path, int lines) {
  std::ifstream in(path);
  if (!in) return "(no log at " + path + ")";
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const std::string& l : tail) out += "  | " + l + "\n";
  return out;
}

std::string TailOfText(const std::string& text, int lines) {
  std::deque<std::string> tail;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    tail.push_back(text.substr(start, end - start));
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
    start = end + 1;
  }
  std::string out;
  for (const std::string& l : tail) out += "  | " + l + "\n";
  return out;
}

// libpq keyword/value quoting: single quotes, with ' and \ escaped by a backslash.
std::string QuoteConnValue(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

// postgresql.conf string literal: single quotes doubled.
std::string QuoteConfValue(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

// The nearest ancestor of `dir` that `uid`/`gid` cannot search, judged by mode bits (PostgreSQL
// only needs to traverse them; `dir` itself will be chowned). Empty when every one is searchable.
std::string FirstUnsearchableAncestor(const std::string& dir, uid_t uid, gid_t gid) {
  fs::path path(dir);
  for (fs::path ancestor = path.parent_path(); !ancestor.empty(); ancestor = ancestor.parent_path()) {
    struct stat st{};
    if (stat(ancestor.c_str(), &st) == 0) {
      mode_t bit = st.st_uid == uid ? S_IXUSR : st.st_gid == gid ? S_IXGRP : S_IXOTH;
      if ((st.st_mode & bit) == 0) return ancestor.string();
    }
    if (ancestor == ancestor.root_path()) break;
  }
  return "";
}

std::string DescribeWaitStatus(int wstatus) {
  if (WIFEXITED(wstatus)) return fmt::format("exited with code {}", WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus)) return fmt::format("was killed by signal {}", WTERMSIG(wstatus));
  return "stopped unexpectedly";
}

// Everything the forked child needs, computed before fork(): between fork() and exec() in a
// multi-threaded process only async-signal-safe calls are allowed.
struct ChildSpec {
  std::vector<std::string> args;
  bool drop_privileges = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string access_check_dir;
  std::string access_error;  // written to the output if the dropped user cannot use the directory
  int output_fd = -1;        // becomes the child's stdout and stderr
  pid_t parent = 0;
};

[[noreturn]] void RunChild(const ChildSpec& spec, char* const* argv) {
  setpgid(0, 0);
  // The caller may block signals (a foreground command waits for SIGINT with sigwait); the server
  // must start with the default dispositions and an empty mask.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2}) {
    signal(sig, SIG_DFL);
  }
  dup2(spec.output_fd, STDOUT_FILENO);
  dup2(spec.output_fd, STDERR_FILENO);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  if (spec.drop_privileges) {
    if (setgroups(1, &spec.gid) != 0 || setgid(spec.gid) != 0 || setuid(spec.uid) != 0) {
      static const char kMsg[] = "sluice: could not switch to the unprivileged OS user\n";
      (void)!write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
      _exit(126);
    }
  }
  // Set after the credential change, which clears it. Exits if the parent is already gone.
  prctl(PR_SET_PDEATHSIG, SIGQUIT);
  if (getppid() != spec.parent) _exit(125);
  if (!spec.access_check_dir.empty() &&
      access(spec.access_check_dir.c_str(), R_OK | W_OK | X_OK) != 0) {
    (void)!write(STDERR_FILENO, spec.access_error.data(), spec.access_error.size());
    _exit(126);
  }
  execv(argv[0], argv);
  static const char kExecMsg[] = "sluice: could not execute the PostgreSQL binary\n";
  (void)!write(STDERR_FILENO, kExecMsg, sizeof(kExecMsg) - 1);
  _exit(127);
}

pid_t Spawn(const ChildSpec& spec) {
  std::vector<char*> argv;
  for (const std::string& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) RunChild(spec, argv.data());
  // Also set here, so the group exists before the parent can signal it.
  if (pid > 0) setpgid(pid, pid);
  return pid;
}

}  // namespace

EmbeddedPostgres::EmbeddedPostgres(EmbeddedPostgresOptions options) : options_(std::move(options)) {
  if (!options_.data_dir.empty()) {
    std::error_code ec;
    fs::path absolute = fs::absolute(options_.data_dir, ec);
    if (!ec) options_.data_dir = absolute.lexically_normal().string();
    while (options_.data_dir.size() > 1 && options_.data_dir.back() == '/') options_.data_dir.pop_back();
  }
}

EmbeddedPostgres::~EmbeddedPostgres() {
  if (running()) (void)Stop();
}

std::string EmbeddedPostgres::log_path() const { return options_.data_dir + "/sluice-postgres.log"; }

std::string EmbeddedPostgres::ConnectionString(std::string_view database) const {
  return fmt::format("host={} port={} user={} dbname={}", host_, port_,
                     QuoteConnValue(options_.superuser), QuoteConnValue(database));
}

Status EmbeddedPostgres::Failure(std::string_view what) const {
  return Status::Error(errors::kEmbeddedServiceFailed,
                       fmt::format("PostgreSQL server in {}: {}. Last lines of {}:\n{}",
                                   options_.data_dir, what, log_path(),
                                   TailOfFile(log_path(), kLogTailLines)));
}

Status EmbeddedPostgres::ResolveOsUser() {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (geteuid() != 0) {
    drop_privileges_ = false;
    run_uid_ = geteuid();
    run_gid_ = getegid();
    getpwuid_r(run_uid_, &entry, buffer.data(), buffer.size(), &found);
    os_user_ = found != nullptr ? found->pw_name : std::to_string(run_uid_);
    return Status::OK();
  }
  std::vector<std::string> candidates;
  if (!options_.os_user.empty()) {
    candidates.push_back(options_.os_user);
  } else {
    candidates = {"postgres", "nobody"};
  }
  for (const std::string& name : candidates) {
    if (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
        found != nullptr && found->pw_uid != 0) {
      drop_privileges_ = true;
      os_user_ = name;
      run_uid_ = found->pw_uid;
      run_gid_ = found->pw_gid;
      return Status::OK();
    }
  }
  return Status::Error(
      errors::kEmbeddedServiceFailed,
      fmt::format("PostgreSQL refuses to run as root and no unprivileged OS user was found (tried {}); "
                  "create one (e.g. `useradd --system postgres`) or set the OS user to an existing one",
                  fmt::join(candidates, ", ")));
}

Status EmbeddedPostgres::EnsureReachable() {
  if (!drop_privileges_ || options_.data_dir.empty()) return Status::OK();
  std::string blocker = FirstUnsearchableAncestor(options_.data_dir, run_uid_, run_gid_);
  if (blocker.empty()) return Status::OK();
  if (!options_.relocate_if_unreachable) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("PostgreSQL runs as OS user {} (it refuses to run as root), which cannot "
                                     "search {} to reach the data directory {}; choose a data directory "
                                     "elsewhere (e.g. under /var/tmp) or make {} searchable (chmod o+x)",
                                     os_user_, blocker, options_.data_dir, blocker));
  }
  options_.data_dir = fmt::format("/var/tmp/sluice-postgres-{:016x}", std::hash<std::string>{}(options_.data_dir));
  relocated_ = true;
  return Status::OK();
}

Status EmbeddedPostgres::PrepareDataDir(bool* needs_initdb) {
  if (options_.data_dir.empty()) {
    return Status::Error(errors::kEmbeddedServiceFailed, "no data directory was given for the PostgreSQL server");
  }
  for (const char* tool : {"initdb", "postgres"}) {
    std::string path = options_.bin_dir + "/" + tool;
    if (access(path.c_str(), X_OK) != 0) {
      return Status::Error(errors::kEmbeddedServiceFailed,
                           fmt::format("PostgreSQL 15 binary {} not found or not executable; install the "
                                       "postgresql-15 package (apt-get install postgresql-15)",
                                       path));
    }
  }
  std::error_code ec;
  fs::create_directories(options_.data_dir, ec);
  if (ec) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("cannot create data directory {}: {}", options_.data_dir, ec.message()));
  }
  if (drop_privileges_ && chown(options_.data_dir.c_str(), run_uid_, run_gid_) != 0) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("cannot give data directory {} to OS user {}: {}", options_.data_dir,
                                     os_user_, std::strerror(errno)));
  }
  if (fs::exists(options_.data_dir + "/PG_VERSION")) {
    *needs_initdb = false;
    return Status::OK();
  }
  if (!fs::is_empty(options_.data_dir, ec)) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("data directory {} is not empty and holds no PostgreSQL cluster; "
                                     "give an empty or new directory",
                                     options_.data_dir));
  }
  *needs_initdb = true;
  return Status::OK();
}

Status EmbeddedPostgres::InitDb() {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Error(errors::kEmbeddedServiceFailed, fmt::format("pipe failed: {}", std::strerror(errno)));
  }
  ChildSpec spec;
  spec.args = {options_.bin_dir + "/initdb",
               "--pgdata=" + options_.data_dir,
               "--username=" + options_.superuser,
               "--auth=trust",
               "--encoding=UTF8",
               "--no-locale",
               "--no-instructions"};
  if (!options_.fsync) spec.args.push_back("--no-sync");
  spec.drop_privileges = drop_privileges_;
  spec.uid = run_uid_;
  spec.gid = run_gid_;
  spec.access_check_dir = options_.data_dir;
  spec.access_error = fmt::format(
      "sluice: OS user {} cannot use {}: every parent directory must be searchable by that user\n",
      os_user_, options_.data_dir);
  spec.output_fd = pipe_fds[1];
  spec.parent = getpid();
  pid_t pid = Spawn(spec);
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    return Status::Error(errors::kEmbeddedServiceFailed, fmt::format("fork failed: {}", std::strerror(errno)));
  }
  std::string output;
  char chunk[4096];
  for (;;) {
    ssize_t n = read(pipe_fds[0], chunk, sizeof(chunk));
    if (n > 0) {
      output.append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("initdb for {} (as OS user {}) {}:\n{}", options_.data_dir, os_user_,
                                     DescribeWaitStatus(wstatus), TailOfText(output, kLogTailLines)));
  }
  std::ofstream conf(options_.data_dir + "/postgresql.conf", std::ios::app);
  conf << "\n# Embedded sluice server: loopback only, logical decoding enabled.\n"
       << "listen_addresses = '127.0.0.1'\n"
       << "unix_socket_directories = " << QuoteConfValue(options_.data_dir) << "\n"
       << "wal_level = logical\n"
       << "max_replication_slots = 20\n"
       << "max_wal_senders = 20\n";
  conf.close();
  if (!conf) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("cannot write {}/postgresql.conf", options_.data_dir));
  }
  return Status::OK();
}

Status EmbeddedPostgres::FailIfDataDirInUse() const {
  std::ifstream pid_file(options_.data_dir + "/postmaster.pid");
  long pid = 0;
  if (!(pid_file >> pid) || pid <= 0) return Status::OK();
  // A server whose owner was just killed is shutting down on its own (SIGQUIT, see the header):
  // give it a moment rather than failing a restart that follows the crash closely.
  auto deadline = Clock::now() + kOrphanShutdownGrace;
  while (IsLivePostgres(static_cast<pid_t>(pid))) {
    if (Clock::now() >= deadline) {
      return Status::Error(errors::kEmbeddedServiceFailed,
                           fmt::format("data directory {} is in use by a running PostgreSQL server (pid {}, "
                                       "recorded in postmaster.pid); stop that server or use another directory",
                                       options_.data_dir, pid));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return Status::OK();
}

Status EmbeddedPostgres::WaitForExit(std::chrono::milliseconds timeout, bool* exited) {
  *exited = false;
  auto deadline = Clock::now() + timeout;
  for (;;) {
    int wstatus = 0;
    pid_t r = waitpid(pid_, &wstatus, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      *exited = true;
      return Status::OK();
    }
    if (Clock::now() >= deadline) return Status::OK();
    std::this_thread::sleep_for(kPollInterval);
  }
}

Status EmbeddedPostgres::LaunchAndWait(int port, bool* port_taken) {
  *port_taken = false;
  int log_fd = open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("cannot open server log {}: {}", log_path(), std::strerror(errno)));
  }
  if (drop_privileges_) (void)!fchown(log_fd, run_uid_, run_gid_);
  ChildSpec spec;
  spec.args = {options_.bin_dir + "/postgres", "-D", options_.data_dir, "-p", std::to_string(port)};
  if (!options_.fsync) {
    spec.args.insert(spec.args.end(), {"-c", "fsync=off"});
  }
  spec.drop_privileges = drop_privileges_;
  spec.uid = run_uid_;
  spec.gid = run_gid_;
  spec.output_fd = log_fd;
  spec.parent = getpid();
  pid_t pid = Spawn(spec);
  close(log_fd);
  if (pid < 0) {
    return Status::Error(errors::kEmbeddedServiceFailed, fmt::format("fork failed: {}", std::strerror(errno)));
  }
  pid_ = pid;
  port_ = port;

  std::string ping_conninfo = ConnectionString("postgres") + " connect_timeout=2";
  auto deadline = Clock::now() + options_.start_timeout;
  for (;;) {
    if (PQping(ping_conninfo.c_str()) == PQPING_OK) return Status::OK();
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = 0;
      port_ = 0;
      std::string tail = TailOfFile(log_path(), kLogTailLines);
      *port_taken = tail.find("Address already in use") != std::string::npos;
      return Failure(fmt::format("the server {} during startup", DescribeWaitStatus(wstatus)));
    }
    if (Clock::now() >= deadline) {
      kill(-pid_, SIGKILL);
      while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
      pid_ = 0;
      port_ = 0;
      return Failure(fmt::format("the server did not accept connections within {} ms",
                                 options_.start_timeout.count()));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

Status EmbeddedPostgres::Start() {
  if (running()) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("PostgreSQL server in {} is already running on port {}", options_.data_dir, port_));
  }
  SLUICE_RETURN_IF_ERROR(ResolveOsUser());
  SLUICE_RETURN_IF_ERROR(EnsureReachable());
  bool needs_initdb = false;
  SLUICE_RETURN_IF_ERROR(PrepareDataDir(&needs_initdb));
  if (needs_initdb) {
    SLUICE_RETURN_IF_ERROR(InitDb());
  } else {
    SLUICE_RETURN_IF_ERROR(FailIfDataDirInUse());
  }
  Status last;
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    int port = FindFreePort();
    if (port == 0) {
      return Status::Error(errors::kEmbeddedServiceFailed, "could not find a free TCP port on 127.0.0.1");
    }
    bool port_taken = false;
    last = LaunchAndWait(port, &port_taken);
    if (last.ok() || !port_taken) return last;
  }
  return last;
}

Status EmbeddedPostgres::Stop() {
  if (!running()) return Status::OK();
  // SIGINT is the postmaster's "fast" shutdown: roll back open transactions, checkpoint, exit.
  kill(pid_, SIGINT);
  bool exited = false;
  SLUICE_RETURN_IF_ERROR(WaitForExit(options_.stop_timeout, &exited));
  if (exited) {
    pid_ = 0;
    port_ = 0;
    return Status::OK();
  }
  kill(-pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  Status failure = Failure(fmt::format("the server did not shut down within {} ms and was killed",
                                       options_.stop_timeout.count()));
  pid_ = 0;
  port_ = 0;
  return failure;
}

Status EmbeddedPostgres::Kill9() {
  if (!running()) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("PostgreSQL server in {} is not running", options_.data_dir));
  }
  // The whole process group: a postmaster killed alone would leave backends attached to its
  // shared memory, and the next start would refuse to run until they exit.
  kill(-pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  // The backends are not this process's children: they exit on their own a moment after the
  // postmaster, and until then hold the shared memory a new start refuses to share ("pre-existing
  // shared memory block is still in use"). Wait for the group to be gone (zombies left to a
  // parent that never reaps them are waited for at most a few seconds).
  for (int i = 0; i < 500 && kill(-pid_, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  pid_ = 0;
  port_ = 0;
  return Status::OK();
}

Status EmbeddedPostgres::Restart() {
  SLUICE_RETURN_IF_ERROR(Stop());
  return Start();
}

Status EmbeddedPostgres::CreateDatabase(std::string_view name) {
  if (!running()) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("cannot create database {}: the PostgreSQL server is not running", name));
  }
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(ConnectionString("postgres").c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Failure(fmt::format("cannot connect to create database {}: {}", name, PQerrorMessage(conn.get())));
  }
  std::unique_ptr<char, decltype(&PQfreemem)> quoted(PQescapeIdentifier(conn.get(), name.data(), name.size()),
                                                      &PQfreemem);
  if (quoted == nullptr) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("invalid database name {}: {}", name, PQerrorMessage(conn.get())));
  }
  std::string sql = std::string("CREATE DATABASE ") + quoted.get();
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn.get(), sql.c_str()), &PQclear);
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("CREATE DATABASE {} failed: {}", name, PQresultErrorMessage(result.get())));
  }
  return Status::OK();
}

}  // namespace sluice::connectors
