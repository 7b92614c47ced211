#include <gtest/gtest.h>

#include "formats/datetime_text.h"
#include "sluice/core/civil_date.h"

namespace sluice::formats {
namespace {

int64_t Micros(std::string_view text) {
  int64_t micros = -1;
  EXPECT_TRUE(ParseTimestampText(text, &micros)) << text;
  return micros;
}

bool Accepts(std::string_view text) {
  int64_t micros;
  return ParseTimestampText(text, &micros);
}

TEST(DatetimeTextTest, DaysCountFromTheEpochInTheProlepticGregorianCalendar) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(1900, 3, 1), -25508);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
}

TEST(DatetimeTextTest, ParsesDatesAndRefusesImpossibleOnes) {
  int32_t days = 0;
  EXPECT_TRUE(ParseDateText("2000-02-29", &days));
  EXPECT_EQ(days, 11016);
  EXPECT_FALSE(ParseDateText("1900-02-29", &days)) << "1900 is not a leap year";
  EXPECT_FALSE(ParseDateText("2024-13-01", &days));
  EXPECT_FALSE(ParseDateText("2024-04-31", &days));
  EXPECT_FALSE(ParseDateText("2024-4-01", &days));
  EXPECT_FALSE(ParseDateText("2024-04-01T00:00:00Z", &days));
  EXPECT_FALSE(ParseDateText("", &days));
}

TEST(DatetimeTextTest, ParsesRfc3339TimestampsToUtcMicros) {
  EXPECT_EQ(Micros("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(Micros("1970-01-01T00:00:01.5Z"), 1500000);
  EXPECT_EQ(Micros("1970-01-01 00:00:00.123456789"), 123456) << "digits past microseconds are dropped";
  EXPECT_EQ(Micros("1970-01-01T02:00:00+02:00"), 0);
  EXPECT_EQ(Micros("1969-12-31T19:00:00-0500"), 0);
  EXPECT_EQ(Micros("1970-01-01T01:00+01"), 0);
  EXPECT_EQ(Micros("1970-01-02"), 86400000000) << "a date alone is midnight UTC";
  EXPECT_EQ(Micros("1969-12-31T23:59:59.999999Z"), -1);
}

TEST(DatetimeTextTest, RefusesWhatIsNotATimestamp) {
  EXPECT_FALSE(Accepts("yesterday"));
  EXPECT_FALSE(Accepts("1970-01-01T24:00:00Z"));
  EXPECT_FALSE(Accepts("1970-01-01T00:60:00Z"));
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00."));
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00Zjunk"));
  EXPECT_FALSE(Accepts("1970-01-01T00:00:00+2"));
  EXPECT_FALSE(Accepts("1970-01-01T00"));
}

}  // namespace
}  // namespace sluice::formats
