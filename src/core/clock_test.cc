#include "sluice/core/clock.h"

#include <atomic>
#include <ctime>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

TEST(SystemClockTest, ReadsTheWallClockAndSleeps) {
  std::shared_ptr<Clock> clock = SystemClock();
  int64_t before = clock->NowMicros();
  EXPECT_NEAR(static_cast<double>(before) / 1e6, static_cast<double>(std::time(nullptr)), 2.0);
  clock->SleepFor(std::chrono::milliseconds(2));
  EXPECT_GE(clock->NowMicros() - before, 2000);
  clock->SleepFor(microseconds(-5));
}

TEST(ManualClockTest, MovesOnlyWhenAdvanced) {
  ManualClock clock(1000);
  EXPECT_EQ(clock.NowMicros(), 1000);
  clock.AdvanceBy(microseconds(500));
  EXPECT_EQ(clock.NowMicros(), 1500);
  clock.AdvanceBy(microseconds(-100));
  EXPECT_EQ(clock.NowMicros(), 1500);
}

TEST(ManualClockTest, SleepingAdvancesTheClockByDefault) {
  ManualClock clock(0);
  clock.SleepFor(seconds(5));
  clock.SleepFor(std::chrono::milliseconds(250));
  clock.SleepFor(microseconds(0));
  EXPECT_EQ(clock.NowMicros(), 5250000);
  EXPECT_EQ(clock.SleepCount(), 3);
  EXPECT_EQ(clock.TotalSleep(), microseconds(5250000));
}

TEST(ManualClockTest, BlockingSleepWakesOnlyWhenTheDeadlinePasses) {
  ManualClock clock(0, ManualClock::SleepMode::kBlockUntilAdvanced);
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepFor(seconds(5));
    woke = true;
  });
  clock.WaitForSleepers(1);
  clock.AdvanceBy(seconds(4));
  clock.WaitForSleepers(1);  // still asleep: its deadline is one second ahead
  EXPECT_FALSE(woke.load());
  clock.AdvanceBy(seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke.load());
  EXPECT_EQ(clock.NowMicros(), 5000000);
}

TEST(ManualClockTest, ABackgroundLoopCanBeSteppedExactly) {
  ManualClock clock(0, ManualClock::SleepMode::kBlockUntilAdvanced);
  std::vector<int64_t> ticks;
  std::thread loop([&] {
    for (int i = 0; i < 10; ++i) {
      clock.SleepFor(seconds(1));
      ticks.push_back(clock.NowMicros());
    }
  });
  for (int i = 0; i < 10; ++i) {
    clock.WaitForSleepers(1);
    clock.AdvanceBy(seconds(1));
  }
  loop.join();
  std::vector<int64_t> expected;
  for (int i = 1; i <= 10; ++i) expected.push_back(i * 1000000LL);
  EXPECT_EQ(ticks, expected);
  EXPECT_EQ(clock.SleepCount(), 10);
}

}  // namespace
}  // namespace sluice
