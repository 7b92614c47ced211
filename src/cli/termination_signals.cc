#include "cli/termination_signals.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

namespace sluice::cli {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSignals();
  int signal_number = 0;
  while (sigwait(&set, &signal_number) != 0) {
  }
  return signal_number;
}

std::optional<int> WaitForTerminationSignalFor(std::chrono::milliseconds timeout) {
  sigset_t set = TerminationSignals();
  timespec wait{static_cast<time_t>(timeout.count() / 1000), static_cast<long>((timeout.count() % 1000) * 1000000)};
  while (true) {
    int signal_number = sigtimedwait(&set, nullptr, &wait);
    if (signal_number > 0) return signal_number;
    if (errno != EINTR) return std::nullopt;
  }
}

}  // namespace sluice::cli
