// Dates and timestamps written as text (ISO 8601 / RFC 3339), as JSON documents carry them.
// Pure functions, thread-safe, no allocation.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::formats {


// "YYYY-MM-DD" -> days since the epoch. False for anything else or an impossible date.
bool ParseDateText(std::string_view text, int32_t* days);

// "YYYY-MM-DD[(T| )hh:mm[:ss[.fraction]]][Z|±hh:mm|±hhmm|±hh]" -> microseconds since the epoch.
// The offset, when present, is subtracted (the result is UTC); a text without one is read as
// UTC, and so is the date alone (midnight). Digits past microseconds are truncated. False for
// anything else.
bool ParseTimestampText(std::string_view text, int64_t* micros);

}  // namespace sluice::formats
