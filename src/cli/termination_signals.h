// Waiting in the foreground for Ctrl-C or a service manager's stop request.
#pragma once

#include <chrono>
#include <optional>

namespace sluice::cli {

// Blocks SIGINT and SIGTERM in the calling thread and in every thread it starts afterwards, so
// that they stay pending for WaitForTerminationSignal instead of killing the process. Call it
// before starting anything that creates threads.
void BlockTerminationSignals();

// Waits until SIGINT or SIGTERM arrives and returns its number.
int WaitForTerminationSignal();

// Waits at most `timeout` for SIGINT or SIGTERM; its number, or nullopt when none arrived.
std::optional<int> WaitForTerminationSignalFor(std::chrono::milliseconds timeout);

}  // namespace sluice::cli
