// Calendar arithmetic and Spark's text forms of dates and timestamps. Internal to expr.
//
// Every function is pure and thread-safe. The session time zone is UTC: timestamps are
// microseconds since the epoch, dates are days since 1970-01-01 (proleptic Gregorian).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/civil_date.h"

namespace sluice::expr {

inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMicrosPerDay = 86'400LL * kMicrosPerSecond;

// Adds calendar months to a day number; the day of month is clipped to the target month's
// length (Jan 31 + 1 month = Feb 28/29), as Spark's add_months.
int64_t AddMonths(int64_t days, int32_t months);
// Floor division of micros into days (negative timestamps round toward the past).
int64_t FloorDiv(int64_t a, int64_t b);

// Spark's string-to-date: "2026", "2026-1", "2026-01-31", "2026-01-31 anything", "2026-01-31T…",
// surrounding whitespace ignored. nullopt when the text is not a date or the date is invalid.
std::optional<int32_t> ParseDate(std::string_view text);
// Spark's string-to-timestamp: a date as above, then optional " "/"T" hh[:mm[:ss[.f{1,9}]]] and
// an optional zone ("Z", "UTC", "+hh:mm", "-hhmm", "+hh"). Without a zone the text is read in UTC.
std::optional<int64_t> ParseTimestamp(std::string_view text);

// A duration as Spark's interval strings write it: "10 minutes", "1 hour 30 minutes", "interval
// 250 milliseconds" (units from week to microsecond, singular or plural, in any case; a fraction
// of seconds only), in microseconds. nullopt for text that is not one, or that has months or
// years (`*month_or_year` is set then: a window cannot be that long).
std::optional<int64_t> ParseDurationMicros(std::string_view text, bool* month_or_year);

// "2026-01-31".
std::string FormatDate(int32_t days);
// "2026-01-31 10:00:00" with the fraction's trailing zeros dropped ("…:00.5"), as Spark casts a
// timestamp to string.
std::string FormatTimestamp(int64_t micros);

// Formats with a Java DateTimeFormatter-style pattern (y M d H h m s S a E, quoted text with '').
// nullopt for a pattern letter that is not supported.
std::optional<std::string> FormatWithPattern(int64_t micros, std::string_view pattern);
// Parses with the same pattern letters; nullopt when the text does not match.
std::optional<int64_t> ParseWithPattern(std::string_view text, std::string_view pattern);

}  // namespace sluice::expr
