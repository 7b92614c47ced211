#include "sluice/core/clock.h"

#include <iterator>
#include <thread>

namespace sluice {
namespace {

class RealClock final : public Clock {
 public:
  int64_t NowMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  void SleepFor(std::chrono::microseconds duration) override {
    if (duration.count() > 0) std::this_thread::sleep_for(duration);
  }
};

}  // namespace

std::shared_ptr<Clock> SystemClock() {
  static const std::shared_ptr<Clock> instance = std::make_shared<RealClock>();
  return instance;
}

ManualClock::ManualClock(int64_t start_micros, SleepMode mode) : mode_(mode), now_micros_(start_micros) {}

int64_t ManualClock::NowMicros() const {
  std::lock_guard lock(mutex_);
  return now_micros_;
}

void ManualClock::SleepFor(std::chrono::microseconds duration) {
  std::unique_lock lock(mutex_);
  ++sleep_count_;
  if (duration.count() <= 0) return;
  total_sleep_ += duration;
  if (mode_ == SleepMode::kAdvanceOnSleep) {
    now_micros_ += duration.count();
    changed_.notify_all();
    return;
  }
  const int64_t deadline = now_micros_ + duration.count();
  auto entry = deadlines_.insert(deadline);
  changed_.notify_all();
  changed_.wait(lock, [&] { return now_micros_ >= deadline; });
  deadlines_.erase(entry);
}

void ManualClock::AdvanceBy(std::chrono::microseconds amount) {
  std::lock_guard lock(mutex_);
  if (amount.count() > 0) now_micros_ += amount.count();
  changed_.notify_all();
}

void ManualClock::WaitForSleepers(int count) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    auto first_ahead = deadlines_.upper_bound(now_micros_);
    return std::distance(first_ahead, deadlines_.end()) >= count;
  });
}

int64_t ManualClock::SleepCount() const {
  std::lock_guard lock(mutex_);
  return sleep_count_;
}

std::chrono::microseconds ManualClock::TotalSleep() const {
  std::lock_guard lock(mutex_);
  return total_sleep_;
}

}  // namespace sluice
