#include "sluice/core/civil_date.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(DaysFromCivilTest, MatchesKnownDates) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 1, 1), 10957);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);      // 2000 is a leap year
  EXPECT_EQ(DaysFromCivil(1900, 3, 1), -25508);     // 1900 is not
  EXPECT_EQ(DaysFromCivil(2026, 1, 31), 20484);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);       // 0001-01-01
  EXPECT_EQ(DaysFromCivil(0, 12, 31), -719163);     // 1 BC, astronomical year 0
  EXPECT_EQ(DaysFromCivil(9999, 12, 31), 2932896);
}

}  // namespace
}  // namespace sluice
