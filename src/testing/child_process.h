// Crash tests run their own test binary as a child that does the work until it is killed: the
// child recognizes its role by an environment variable that a static initializer checks before
// any test runs.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sluice::testing {

// Starts this executable again with the current environment plus `extra_environment`
// ("NAME=value" entries), stdout and stderr appended to `log_path`. The child's pid, or -1.
pid_t SpawnSelf(const std::vector<std::string>& extra_environment, const std::string& log_path);

}  // namespace sluice::testing
