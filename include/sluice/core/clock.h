// Clock: where the engine reads the time and waits (trigger intervals, retries, timeouts), so that
// tests can control time instead of sleeping.
//
// Implementations are thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>

namespace sluice {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch.
  virtual int64_t NowMicros() const = 0;
  // Returns after `duration` has passed on this clock. Non-positive durations return at once.
  virtual void SleepFor(std::chrono::microseconds duration) = 0;
};

// The real time (CLOCK_REALTIME) and a real sleep. One shared instance.
std::shared_ptr<Clock> SystemClock();

// A clock that moves only when told to, for deterministic tests.
//
// SleepFor has two behaviours, chosen at construction:
// - kAdvanceOnSleep (the default): SleepFor moves the clock forward by the duration and returns at
//   once. A single-threaded test of a trigger loop runs instantly, and the time it reads is
//   exactly the sum of the waits the code asked for.
// - kBlockUntilAdvanced: SleepFor blocks until another thread has advanced the clock past the
//   sleeper's deadline. For a background loop driven step by step from a test:
//     clock.WaitForSleepers(1);        // the loop is now waiting
//     clock.AdvanceBy(std::chrono::seconds(5));  // wake it exactly once
//   so the background thread never spins and never races the test's assertions.
class ManualClock final : public Clock {
 public:
  enum class SleepMode { kAdvanceOnSleep, kBlockUntilAdvanced };

  explicit ManualClock(int64_t start_micros = 0, SleepMode mode = SleepMode::kAdvanceOnSleep);

  int64_t NowMicros() const override;
  void SleepFor(std::chrono::microseconds duration) override;

  // Moves the clock forward (a negative amount is ignored: time never goes back) and wakes the
  // sleepers whose deadline has passed.
  void AdvanceBy(std::chrono::microseconds amount);
  // Blocks until at least `count` threads are blocked in SleepFor with a deadline still ahead
  // (kBlockUntilAdvanced only).
  void WaitForSleepers(int count);
  // The number of SleepFor calls so far and the total time they asked for.
  int64_t SleepCount() const;
  std::chrono::microseconds TotalSleep() const;

 private:
  const SleepMode mode_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int64_t now_micros_;
  // Deadlines of the threads blocked in SleepFor. A sleeper whose deadline has passed no longer
  // counts as sleeping, even before it has woken up, so WaitForSleepers never sees a stale one.
  std::multiset<int64_t> deadlines_;
  int64_t sleep_count_ = 0;
  std::chrono::microseconds total_sleep_{0};
};

}  // namespace sluice
