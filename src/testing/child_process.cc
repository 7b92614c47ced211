#include "testing/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/wait.h>

#include <chrono>
#include <deque>
#include <thread>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sluice/core/error_classes.h"
#include "sluice/storage/http_client.h"

extern char** environ;

namespace sluice::testing {

pid_t SpawnSelf(const std::vector<std::string>& extra_environment, const std::string& log_path) {
  char self[4096];
  ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return -1;
  self[length] = '\0';
  std::vector<std::string> added = extra_environment;
  std::vector<char*> argv = {self, nullptr};
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (std::string& entry : added) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  int error = posix_spawn(&pid, self, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

std::string TailOf(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  return fmt::format("{}", fmt::join(last, "\n"));
}

// Forks and executes `args` with stdout and stderr appended to `log_path`, in a process group
// of its own, killed when the calling thread ends. Every string is prepared before fork().
pid_t Spawn(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int output = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (output < 0) return -1;
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    dup2(output, STDOUT_FILENO);
    dup2(output, STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(output);
  if (pid > 0) setpgid(pid, pid);
  return pid;
}

Result<pid_t> SpawnHttpServer(const std::vector<std::string>& args, const std::string& log_path,
                              const std::string& url, std::string_view name) {
  const pid_t pid = Spawn(args, log_path);
  if (pid < 0) return Status::Error(errors::kEmbeddedServiceFailed, fmt::format("cannot start {} ({})", name, args[0]));
  storage::HttpClient http({std::chrono::milliseconds(1000), std::chrono::milliseconds(5000), ""});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return Status::Error(errors::kEmbeddedServiceFailed, fmt::format("{} exited:\n{}", name, TailOf(log_path, 20)));
    }
    Result<storage::HttpResponse> answer = http.Send({"GET", url, {}, {}});
    if (answer.ok() && answer->status > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Error(errors::kEmbeddedServiceFailed,
                       fmt::format("{} did not answer within 60 s:\n{}", name, TailOf(log_path, 20)));
}

}  // namespace sluice::testing
