// The seed of a crash test's random choices (kill times, events): SLUICE_CRASH_SEED when set, so
// that a failed run can be replayed, else a random one. The seed is printed either way.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>

namespace sluice::testing {

inline uint64_t CrashSeed() {
  uint64_t seed = std::random_device{}();
  if (const char* given = std::getenv("SLUICE_CRASH_SEED")) seed = std::strtoull(given, nullptr, 10);
  std::cout << "crash test seed " << seed << " (SLUICE_CRASH_SEED replays it)\n";
  return seed;
}

}  // namespace sluice::testing
