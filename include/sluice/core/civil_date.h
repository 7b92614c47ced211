// Proleptic Gregorian calendar arithmetic shared by every layer that turns dates into day
// numbers and back (SQL literals and functions, JSON and Avro text, PostgreSQL text, Delta
// partition values and statistics).
#pragma once

#include <cstdint>

namespace sluice {

// Days since 1970-01-01 of year/month/day (month 1-12, day 1-31; not validated), for any year,
// BC included as astronomical years (1 BC = 0). Howard Hinnant's days_from_civil.
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day);

struct CivilDate {
  int64_t year;  // astronomical: 1 BC = 0
  int month;     // 1..12
  int day;       // 1..31
};

// 28 to 31: the days of `month` (1-12) in `year`.
int DaysInMonth(int64_t year, int month);

// The date `days` after 1970-01-01 (negative: before), the inverse of DaysFromCivil. Howard
// Hinnant's civil_from_days.
CivilDate CivilFromDays(int64_t days);

}  // namespace sluice
