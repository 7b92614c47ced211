// Dates and timestamps written as ISO-8601 text: the form JSON documents, csv files, Delta
// partition values and sluice's own output carry them in. Pure functions, thread-safe, no
// allocation. (SQL casts, which accept Spark's looser forms, have their own parser in expr.)
//
//   date       [-]YYYY-MM-DD             years of 4 to 6 digits, astronomical (0 = 1 BC)
//   timestamp  date[(T|t| )hh:mm[:ss[.fraction]]][zone]
//   zone       Z | z | ±hh | ±hhmm | ±hh:mm   (at most ±18:00)
//
// Digits past microseconds are truncated. Leap seconds (":60") are refused, as Spark refuses them.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

// Days since 1970-01-01. False for any other text or an impossible date (2023-02-29).
bool ParseIsoDate(std::string_view text, int32_t* days);

// Microseconds since 1970-01-01 00:00, the zone's offset subtracted (so UTC when a zone is given;
// the wall-clock time as written when none is). `*has_zone` (when not null) tells whether a zone
// was written, for callers that refuse one (timestamp_ntz). False for any other text and for
// instants outside the microsecond range of int64.
bool ParseIsoTimestamp(std::string_view text, int64_t* micros, bool* has_zone = nullptr);

}  // namespace sluice
