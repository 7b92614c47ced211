// 128-bit decimal helpers: SQL literals, casts and arithmetic, and the JSON reader.
// Values are unscaled integers with a separate scale, as Spark's Decimal; all functions are pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/types.h"

namespace sluice {

// 10^n for 0 <= n <= 38.
int128_t Pow10(int n);
// True when |value| needs at most `precision` digits.
bool FitsPrecision(int128_t value, int precision);
// Changes the scale of an unscaled value, rounding HALF_UP when digits are dropped; nullopt on
// overflow of 128 bits.
std::optional<int128_t> Rescale(int128_t value, int from_scale, int to_scale);
// Parses "12.5", "-1e3", " 7 " into a value of the given scale (HALF_UP); nullopt when the text
// is not a number or does not fit `precision`.
std::optional<int128_t> ParseDecimal(std::string_view text, int precision, int scale);
// Division with HALF_UP (HALF_EVEN) rounding of the quotient (b != 0).
int128_t DivideRoundHalfUp(int128_t a, int128_t b);
int128_t DivideRoundHalfEven(int128_t a, int128_t b);

}  // namespace sluice
