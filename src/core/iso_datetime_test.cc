#include "sluice/core/iso_datetime.h"

#include <gtest/gtest.h>

#include "sluice/core/civil_date.h"

namespace sluice {
namespace {

int64_t Micros(std::string_view text) {
  int64_t micros = -1;
  EXPECT_TRUE(ParseIsoTimestamp(text, &micros)) << text;
  return micros;
}

bool Accepts(std::string_view text) {
  int64_t micros;
  return ParseIsoTimestamp(text, &micros);
}

TEST(IsoDatetimeTest, DaysCountFromTheEpochInTheProlepticGregorianCalendar) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(1900, 3, 1), -25508);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
  EXPECT_EQ(DaysInMonth(2000, 2), 29);
  EXPECT_EQ(DaysInMonth(1900, 2), 28);
  EXPECT_EQ(DaysInMonth(2024, 4), 30);
}

TEST(IsoDatetimeTest, ParsesDatesAndRefusesImpossibleOnes) {
  int32_t days = 0;
  EXPECT_TRUE(ParseIsoDate("2000-02-29", &days));
  EXPECT_EQ(days, 11016);
  EXPECT_TRUE(ParseIsoDate("-0001-12-31", &days)) << "astronomical year -1 is 2 BC";
  EXPECT_EQ(days, DaysFromCivil(-1, 12, 31));
  EXPECT_TRUE(ParseIsoDate("10000-01-01", &days));
  EXPECT_EQ(days, DaysFromCivil(10000, 1, 1));
  EXPECT_FALSE(ParseIsoDate("1900-02-29", &days)) << "1900 is not a leap year";
  EXPECT_FALSE(ParseIsoDate("2024-13-01", &days));
  EXPECT_FALSE(ParseIsoDate("2024-04-31", &days));
  EXPECT_FALSE(ParseIsoDate("2024-4-01", &days));
  EXPECT_FALSE(ParseIsoDate("224-04-01", &days));
  EXPECT_FALSE(ParseIsoDate("1234567-04-01", &days));
  EXPECT_FALSE(ParseIsoDate("2024-04-01T00:00:00Z", &days));
  EXPECT_FALSE(ParseIsoDate("", &days));
  EXPECT_FALSE(ParseIsoDate("-", &days));
}

TEST(IsoDatetimeTest, ParsesTimestampsToMicrosSubtractingTheOffset) {
  EXPECT_EQ(Micros("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(Micros("1970-01-01t00:00:00z"), 0);
  EXPECT_EQ(Micros("1970-01-01T00:00:01.5Z"), 1500000);
  EXPECT_EQ(Micros("1970-01-01 00:00:00.123456789"), 123456) << "digits past microseconds are dropped";
  EXPECT_EQ(Micros("1970-01-01T02:00:00+02:00"), 0);
  EXPECT_EQ(Micros("1969-12-31T19:00:00-0500"), 0);
  EXPECT_EQ(Micros("1970-01-01T01:00+01"), 0);
  EXPECT_EQ(Micros("1970-01-01T18:00:00+18:00"), 0);
  EXPECT_EQ(Micros("1970-01-02"), 86400000000) << "a date alone is midnight";
  EXPECT_EQ(Micros("1969-12-31T23:59:59.999999Z"), -1);
  EXPECT_EQ(Micros("-0001-01-01T00:00:00Z"), DaysFromCivil(-1, 1, 1) * 86400000000);
}

TEST(IsoDatetimeTest, TellsWhetherAZoneWasWritten) {
  int64_t micros = 0;
  bool has_zone = true;
  ASSERT_TRUE(ParseIsoTimestamp("2026-01-31 10:00:00", &micros, &has_zone));
  EXPECT_FALSE(has_zone);
  ASSERT_TRUE(ParseIsoTimestamp("2026-01-31T10:00:00Z", &micros, &has_zone));
  EXPECT_TRUE(has_zone);
  ASSERT_TRUE(ParseIsoTimestamp("2026-01-31T10:00:00-03:30", &micros, &has_zone));
  EXPECT_TRUE(has_zone);
  EXPECT_EQ(micros, Micros("2026-01-31T13:30:00Z"));
}

TEST(IsoDatetimeTest, RefusesWhatIsNotATimestamp) {
  EXPECT_FALSE(Accepts("yesterday"));
  EXPECT_FALSE(Accepts("1970-01-01T24:00:00Z"));
  EXPECT_FALSE(Accepts("1970-01-01T00:60:00Z"));
  EXPECT_FALSE(Accepts("1970-01-01T23:59:60Z")) << "leap seconds";
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00."));
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00Zjunk"));
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00+2"));
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00+18:30")) << "offsets end at 18 hours";
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00 UTC"));
  EXPECT_FALSE(Accepts("1970-01-01T00"));
  EXPECT_FALSE(Accepts("1970-01-01T"));
  EXPECT_FALSE(Accepts("999999-12-31T00:00:00Z")) << "beyond int64 microseconds";
  EXPECT_FALSE(Accepts("-999999-01-01"));
}

}  // namespace
}  // namespace sluice
