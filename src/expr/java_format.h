// Java's Formatter (java.util.Formatter, Locale.US), as Spark's format_string and printf apply it
// to the values of a row. Internal to expr.
//
// Specifiers: %[index$|<][flags][width][.precision]conversion with the conversions b B s S c C d
// o x X e E f g G a A % n and the flags - # + space 0 , ( — each with Java's checks (a flag or a
// precision a conversion does not take, a missing argument, an argument of the wrong kind), which
// fail with INVALID_PARAMETER_VALUE naming the specifier, as Java's exceptions fail Spark's query.
// Floating-point values round HALF_UP from their shortest decimal digits, as Java does.
// Date/time conversions (%t) and hash codes (%h) are refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::expr {

// One argument as Spark hands it to the formatter: its internal value (dates are day numbers,
// timestamps microseconds, decimals their text).
struct FormatArgument {
  enum class Kind { kNull, kBoolean, kIntegral, kFloating, kText };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integral = 0;
  int bits = 64;           // of an integral value: 8, 16, 32 or 64 (two's complement for %x, %o)
  double floating = 0;
  bool is_float = false;   // a float, not a double (its %s text is Float.toString's)
  std::string_view text;   // a string, or a decimal's text (which no numeric conversion takes)
};

// `pattern` applied to `arguments`, appended to `out`.
Status AppendJavaFormat(std::string_view pattern, std::span<const FormatArgument> arguments, std::string* out);

}  // namespace sluice::expr
