// Crash tests run their own test binary as a child that does the work until it is killed: the
// child recognizes its role by an environment variable that a static initializer checks before
// any test runs.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::testing {

// Starts this executable again with the current environment plus `extra_environment`
// ("NAME=value" entries), stdout and stderr appended to `log_path`. The child's pid, or -1.
pid_t SpawnSelf(const std::vector<std::string>& extra_environment, const std::string& log_path);

// Forks and executes `args` (argv[0] looked up on PATH) with stdout and stderr appended to
// `log_path`, in a process group of its own, killed when the calling thread ends. The pid, or -1.
pid_t Spawn(const std::vector<std::string>& args, const std::string& log_path);

// Spawns `args` and waits up to 60 s until `url` answers with any HTTP status: the pid, or
// EMBEDDED_SERVICE_FAILED naming `name` with the tail of its log when it exits or stays silent.
Result<pid_t> SpawnHttpServer(const std::vector<std::string>& args, const std::string& log_path,
                              const std::string& url, std::string_view name);

// A loopback TCP port that was free a moment ago (0 when none could be had).
int FreePort();

// The last `lines` lines of a text file ("" when it cannot be read).
std::string TailOf(const std::string& path, size_t lines);

}  // namespace sluice::testing
