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

TEST(CivilFromDaysTest, InvertsDaysFromCivil) {
  struct Case {
    int64_t year;
    int month;
    int day;
  };
  for (Case c : {Case{1970, 1, 1}, Case{1969, 12, 31}, Case{2000, 2, 29}, Case{1900, 2, 28}, Case{1900, 3, 1},
                 Case{2026, 1, 31}, Case{1, 1, 1}, Case{0, 12, 31}, Case{-44, 3, 15}, Case{9999, 12, 31}}) {
    CivilDate date = CivilFromDays(DaysFromCivil(c.year, c.month, c.day));
    EXPECT_EQ(date.year, c.year);
    EXPECT_EQ(date.month, c.month);
    EXPECT_EQ(date.day, c.day);
  }
  for (int64_t days = -800000; days <= 3000000; days += 997) {
    CivilDate date = CivilFromDays(days);
    EXPECT_EQ(DaysFromCivil(date.year, date.month, date.day), days);
  }
}

}  // namespace
}  // namespace sluice
