// CAST in Spark's three evaluation modes. Non-ANSI (kLegacy): a value that cannot be converted
// becomes null (strings that are not numbers, dates that do not exist, decimals that overflow);
// narrowing integer casts wrap as Java's; floating-point to integer casts saturate, NaN becoming
// 0; strings with a fraction cast to integers truncated. ANSI and TRY (strict): every value
// that does not convert exactly as far as the target holds it (a fraction dropped from a number
// is fine, from a string is not) is a failure, which ANSI raises and TRY makes null.
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "expr/bound.h"

#include "expr/coercion.h"
#include "expr/datetime.h"
#include "sluice/core/decimal.h"
#include "expr/kernel_util.h"
#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"

namespace sluice::expr {
namespace {

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

// Spark's UTF8String.toLong: optional sign, digits, optionally '.' and digits (truncated); with
// `strict` (ANSI) no fraction.
std::optional<int64_t> ParseLong(std::string_view text, bool strict) {
  std::string_view s = TrimSpace(text);
  if (s.empty()) return std::nullopt;
  bool negative = s[0] == '-';
  if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  size_t i = 0;
  bool any = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    any = true;
    if (value > (static_cast<uint64_t>(INT64_MAX) + 1) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(s[i] - '0');
    if (value > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) return std::nullopt;
  }
  if (i < s.size()) {
    if (s[i] != '.' || strict) return std::nullopt;
    for (++i; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
    }
  }
  if (!any && i <= 1) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
}

std::optional<double> ParseDouble(std::string_view text) {
  std::string_view s = TrimSpace(text);
  if (s.empty()) return std::nullopt;
  // The special values first: "inf" ends in an f that is not a float suffix.
  std::string_view unsigned_part = (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
  bool negative = s[0] == '-';
  if (EqualsIgnoreCase(unsigned_part, "infinity") || EqualsIgnoreCase(unsigned_part, "inf")) {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (EqualsIgnoreCase(unsigned_part, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (s.back() == 'd' || s.back() == 'D' || s.back() == 'f' || s.back() == 'F') s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  if (s[0] == '+') s.remove_prefix(1);
  double value = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (p != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    return s[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (ec != std::errc()) return std::nullopt;
  return value;
}

std::optional<bool> ParseBoolean(std::string_view text) {
  std::string_view s = TrimSpace(text);
  for (std::string_view t : {"t", "true", "y", "yes", "1"}) {
    if (EqualsIgnoreCase(s, t)) return true;
  }
  for (std::string_view f : {"f", "false", "n", "no", "0"}) {
    if (EqualsIgnoreCase(s, f)) return false;
  }
  return std::nullopt;
}

double DecimalAsDouble(int128_t v, int scale) {
  if (scale <= 22 && v < (int128_t{1} << 53) && v > -(int128_t{1} << 53)) {
    return static_cast<double>(static_cast<int64_t>(v)) / std::pow(10.0, scale);
  }
  return *ParseDouble(DecimalText(v, scale));
}

// Java's narrowing of a double to an integral type: saturate to int (or long), then wrap.
template <typename T>
T DoubleToIntegral(double d) {
  if (std::isnan(d)) return 0;
  if constexpr (sizeof(T) == 8) {
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return static_cast<T>(d);
  } else {
    int32_t i;
    if (d >= 2147483647.0) i = INT32_MAX;
    else if (d <= -2147483648.0) i = INT32_MIN;
    else i = static_cast<int32_t>(d);
    return static_cast<T>(i);
  }
}

// Writes `rows` fixed-width values of type T produced by convert(row, &value) -> bool.
template <typename T, typename F>
ColumnPtr FixedCast(const Column& from, const TypePtr& to, F convert) {
  auto out = NewFixedColumn(to, from.length);
  T* values = reinterpret_cast<T*>(out->data.data());
  std::vector<uint8_t> validity = from.validity;
  bool has_validity = !validity.empty();
  for (int64_t i = 0; i < from.length; ++i) {
    if (has_validity && validity[static_cast<size_t>(i)] == 0) continue;
    if (!convert(i, &values[i])) {
      if (!has_validity) {
        validity.assign(static_cast<size_t>(from.length), 1);
        has_validity = true;
      }
      validity[static_cast<size_t>(i)] = 0;
    }
  }
  SetValidity(out.get(), std::move(validity));
  return out;
}

// Reads row i of a numeric/boolean column as a double.
double AsDouble(const Column& c, int64_t i) {
  TypeId id = c.type->id();
  if (id == TypeId::kDecimal) return DecimalAsDouble(c.Value<int128_t>(i), c.type->scale());
  return DispatchFixed(id, [&](auto zero) { return static_cast<double>(c.Value<decltype(zero)>(i)); });
}

// Integral value (booleans 0/1, decimals truncated, timestamps to seconds) as int128.
int128_t AsInteger(const Column& c, int64_t i) {
  TypeId id = c.type->id();
  if (id == TypeId::kDecimal) return c.Value<int128_t>(i) / Pow10(c.type->scale());
  if (id == TypeId::kTimestamp || id == TypeId::kTimestampNtz) return FloorDiv(c.Value<int64_t>(i), kMicrosPerSecond);
  return DispatchFixed(id, [&](auto zero) -> int128_t {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      return 0;
    } else {
      return static_cast<int128_t>(c.Value<T>(i));
    }
  });
}

template <typename T>
bool InRange(int128_t v) {
  return v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
}

// A double truncated toward zero fits T (NaN and infinities do not).
// Compared without truncating (the bounds are exact doubles; NaN fails every comparison).
template <typename T>
bool TruncatedFits(double d) {
  if constexpr (sizeof(T) == 8) return d >= -9.2233720368547758e18 && d < 9.2233720368547758e18;
  return d > static_cast<double>(std::numeric_limits<T>::min()) - 1.0 &&
         d < static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
}

template <typename T>
ColumnPtr CastToIntegral(const Column& from, const TypePtr& to, bool strict) {
  TypeId id = from.type->id();
  if (id == TypeId::kString) {
    return FixedCast<T>(from, to, [&](int64_t i, T* out) {
      auto v = ParseLong(from.View(i), strict);
      if (!v || !InRange<T>(*v)) return false;
      *out = static_cast<T>(*v);
      return true;
    });
  }
  if (id == TypeId::kFloat || id == TypeId::kDouble) {
    // Read as the column's own type: no per-row dispatch on it.
    auto convert = [&](const auto* values) {
      return FixedCast<T>(from, to, [&](int64_t i, T* out) {
        const double d = values[i];
        if (strict && !TruncatedFits<T>(d)) return false;
        *out = DoubleToIntegral<T>(d);
        return true;
      });
    };
    return id == TypeId::kFloat ? convert(from.values<float>()) : convert(from.values<double>());
  }
  return FixedCast<T>(from, to, [&](int64_t i, T* out) {
    const int128_t v = AsInteger(from, i);
    if (strict && !InRange<T>(v)) return false;
    *out = static_cast<T>(static_cast<int64_t>(v));
    return true;
  });
}

template <typename T>
ColumnPtr CastToFloating(const Column& from, const TypePtr& to) {
  TypeId id = from.type->id();
  if (id == TypeId::kString) {
    return FixedCast<T>(from, to, [&](int64_t i, T* out) {
      auto v = ParseDouble(from.View(i));
      if (!v) return false;
      *out = static_cast<T>(*v);
      return true;
    });
  }
  if (id == TypeId::kTimestamp || id == TypeId::kTimestampNtz) {
    return FixedCast<T>(from, to, [&](int64_t i, T* out) {
      *out = static_cast<T>(static_cast<double>(from.Value<int64_t>(i)) / 1e6);
      return true;
    });
  }
  return FixedCast<T>(from, to, [&](int64_t i, T* out) {
    *out = static_cast<T>(AsDouble(from, i));
    return true;
  });
}

ColumnPtr CastToDecimal(const Column& from, const TypePtr& to) {
  int p = to->precision(), s = to->scale();
  TypeId id = from.type->id();
  auto fit = [p](std::optional<int128_t> v, int128_t* out) {
    if (!v || !FitsPrecision(*v, p)) return false;
    *out = *v;
    return true;
  };
  if (id == TypeId::kString) {
    return FixedCast<int128_t>(from, to, [&](int64_t i, int128_t* out) { return fit(ParseDecimal(from.View(i), p, s), out); });
  }
  if (id == TypeId::kDecimal) {
    int from_scale = from.type->scale();
    return FixedCast<int128_t>(from, to, [&](int64_t i, int128_t* out) {
      return fit(Rescale(from.Value<int128_t>(i), from_scale, s), out);
    });
  }
  if (id == TypeId::kFloat || id == TypeId::kDouble) {
    return FixedCast<int128_t>(from, to, [&](int64_t i, int128_t* out) {
      double d = AsDouble(from, i);
      if (!std::isfinite(d)) return false;
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
      return fit(ParseDecimal(std::string_view(buf, static_cast<size_t>(end - buf)), p, s), out);
    });
  }
  return FixedCast<int128_t>(from, to, [&](int64_t i, int128_t* out) { return fit(Rescale(AsInteger(from, i), 0, s), out); });
}

ColumnPtr CastToString(const Column& from, const TypePtr& to) {
  StringWriter writer(to, from.length);
  TypeId id = from.type->id();
  for (int64_t i = 0; i < from.length; ++i) {
    if (from.IsNull(i)) {
      writer.AppendNull();
      continue;
    }
    if (to->id() == TypeId::kBinary && from.type->is_integral()) {
      const int width = from.type->byte_width();
      const uint64_t value = static_cast<uint64_t>(AsInteger(from, i));
      char bytes[8];
      for (int b = 0; b < width; ++b) bytes[b] = static_cast<char>(value >> (8 * (width - 1 - b)));
      writer.Append(std::string_view(bytes, static_cast<size_t>(width)));
      continue;
    }
    switch (id) {
      case TypeId::kString: writer.Append(from.View(i)); break;
      case TypeId::kBinary: {
        // Strings hold valid UTF-8 (core/utf8.h): invalid bytes become U+FFFD, as Spark's
        // make_valid_utf8 makes them.
        std::string_view bytes = from.View(i);
        if (IsValidUtf8(bytes)) {
          writer.Append(bytes);
        } else {
          writer.Append(MakeValidUtf8(bytes));
        }
        break;
      }
      case TypeId::kBoolean: writer.Append(from.Value<uint8_t>(i) ? "true" : "false"); break;
      case TypeId::kFloat: writer.Append(JavaFloatString(from.Value<float>(i))); break;
      case TypeId::kDouble: writer.Append(JavaDoubleString(from.Value<double>(i))); break;
      case TypeId::kDecimal: writer.Append(DecimalText(from.Value<int128_t>(i), from.type->scale())); break;
      case TypeId::kDate: writer.Append(FormatDate(from.Value<int32_t>(i))); break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz: writer.Append(FormatTimestamp(from.Value<int64_t>(i))); break;
      default: {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(AsInteger(from, i)));
        writer.Append(std::string_view(buf, static_cast<size_t>(end - buf)));
      }
    }
  }
  return writer.Finish();
}

ColumnPtr Convert(const Column& from, const TypePtr& to, bool strict);

ColumnPtr CastNested(const Column& from, const TypePtr& to, bool strict) {
  auto out = std::make_shared<Column>(from);
  out->type = to;
  if (to->id() == TypeId::kStruct) {
    for (int f = 0; f < to->num_fields(); ++f) {
      out->children[static_cast<size_t>(f)] = Convert(*from.children[static_cast<size_t>(f)], to->field(f).type, strict);
    }
  } else if (to->id() == TypeId::kArray) {
    out->children[0] = Convert(*from.children[0], to->element_type(), strict);
  } else {
    out->children[0] = Convert(*from.children[0], to->key_type(), strict);
    out->children[1] = Convert(*from.children[1], to->value_type(), strict);
  }
  return out;
}

// A value the cast could not convert: the innermost input column and row that held a value
// its output does not.
struct LostValue {
  const Column* from = nullptr;
  const Column* to = nullptr;
  int64_t row = -1;
};

// The first of `rows` (ascending) where `from` holds a value and `to` does not, looking inside
// the nested values of valid rows only (a null struct's fields are not values).
std::optional<LostValue> FirstLostValue(const Column& from, const Column& to, const std::vector<int64_t>& rows) {
  std::vector<int64_t> valid;
  for (int64_t row : rows) {
    if (from.IsNull(row)) continue;
    if (to.IsNull(row)) return LostValue{&from, &to, row};
    valid.push_back(row);
  }
  if (!from.type->is_nested() || valid.empty()) return std::nullopt;
  if (from.type->id() == TypeId::kStruct) {
    for (size_t f = 0; f < from.children.size(); ++f) {
      if (auto lost = FirstLostValue(*from.children[f], *to.children[f], valid)) return lost;
    }
    return std::nullopt;
  }
  std::vector<int64_t> elements;
  for (int64_t row : valid) {
    for (int64_t e = from.offsets[static_cast<size_t>(row)]; e < from.offsets[static_cast<size_t>(row) + 1]; ++e) {
      elements.push_back(e);
    }
  }
  for (size_t c = 0; c < from.children.size(); ++c) {
    if (auto lost = FirstLostValue(*from.children[c], *to.children[c], elements)) return lost;
  }
  return std::nullopt;
}

Status CastFailure(const LostValue& lost) {
  const DataType& from = *lost.from->type;
  const DataType& to = *lost.to->type;
  std::string value = FormatValue(*lost.from, lost.row);
  if (from.id() == TypeId::kString) value = "'" + value + "'";
  const bool out_of_range = to.id() == TypeId::kDecimal &&
                            (from.id() != TypeId::kString || ParseDouble(lost.from->View(lost.row)).has_value());
  if (out_of_range) {
    return Status::Error(errors::kNumericValueOutOfRange,
                         fmt::format("the value {} of type {} does not fit {}", value, from.ToString(), to.ToString()));
  }
  if (from.id() == TypeId::kString) {
    return Status::Error(errors::kCastInvalidInput,
                         fmt::format("the value {} of type string cannot be cast to {}: it is malformed", value,
                                     to.ToString()));
  }
  return Status::Error(errors::kCastOverflow,
                       fmt::format("the value {} of type {} cannot be cast to {}: it overflows", value,
                                   from.ToString(), to.ToString()));
}

}  // namespace

std::string JavaDoubleString(double value) {
  std::string text;
  AppendDoubleText(value, &text);
  return text;
}
std::string JavaFloatString(float value) {
  std::string text;
  AppendFloatText(value, &text);
  return text;
}

bool CanCast(const DataType& from, const DataType& to, bool ansi) {
  if (from.Equals(to)) return true;
  TypeId f = from.id(), t = to.id();
  if (from.is_nested() || to.is_nested()) {
    if (f != t) return false;
    if (t == TypeId::kStruct) {
      if (from.num_fields() != to.num_fields()) return false;
      for (int i = 0; i < from.num_fields(); ++i) {
        if (!CanCast(*from.field(i).type, *to.field(i).type, ansi)) return false;
      }
      return true;
    }
    if (t == TypeId::kArray) return CanCast(*from.element_type(), *to.element_type(), ansi);
    return CanCast(*from.key_type(), *to.key_type(), ansi) && CanCast(*from.value_type(), *to.value_type(), ansi);
  }
  bool from_numeric = from.is_numeric() || f == TypeId::kBoolean;
  if (t == TypeId::kString) return true;
  // Non-ANSI Spark casts integral values to binary as their big-endian bytes.
  if (t == TypeId::kBinary) return f == TypeId::kString || (!ansi && from.is_integral());
  if (f == TypeId::kString) return true;
  if (f == TypeId::kBinary) return false;
  if (to.is_numeric() || t == TypeId::kBoolean) {
    // A date is no number in ANSI mode (non-ANSI casts it to NULL).
    return from_numeric || f == TypeId::kTimestamp || f == TypeId::kTimestampNtz || (!ansi && f == TypeId::kDate);
  }
  if (t == TypeId::kDate) return IsDatetime(from);
  // timestamps
  return IsDatetime(from) || from.is_numeric();
}

bool CastCanFail(const DataType& from, const DataType& to) {
  if (from.Equals(to)) return false;
  const TypeId f = from.id(), t = to.id();
  if (t == TypeId::kString) return false;
  if (from.is_nested()) return true;
  if (IsDatetime(from) && IsDatetime(to)) return false;
  if (f == TypeId::kBoolean) return false;
  if (from.is_integral()) {
    if (to.is_integral()) return to.byte_width() < from.byte_width();
    if (t == TypeId::kFloat || t == TypeId::kDouble) return false;
    if (t == TypeId::kDecimal) return to.precision() - to.scale() < DecimalForIntegral(from)->precision();
  }
  if (f == TypeId::kFloat && t == TypeId::kDouble) return false;
  if (f == TypeId::kDecimal && (t == TypeId::kFloat || t == TypeId::kDouble)) return false;
  return true;
}

Result<ColumnPtr> CastColumn(const Column& from, const TypePtr& to, EvalMode mode) {
  ColumnPtr out = Convert(from, to, mode != EvalMode::kLegacy);
  // A value lost on the way (a new null, at any depth) is what ANSI mode raises.
  if (mode != EvalMode::kAnsi) return out;
  if (!to->is_nested() && out->null_count == from.null_count) return out;
  std::vector<int64_t> rows(static_cast<size_t>(from.length));
  for (int64_t i = 0; i < from.length; ++i) rows[static_cast<size_t>(i)] = i;
  if (auto lost = FirstLostValue(from, *out, rows)) return CastFailure(*lost);
  return out;
}

namespace {

ColumnPtr Convert(const Column& from, const TypePtr& to, bool strict) {
  TypeId f = from.type->id();
  if (from.type->Equals(*to)) return std::make_shared<Column>(from);
  if (to->is_nested()) return CastNested(from, to, strict);
  // A date is no number (non-ANSI Spark casts it to NULL; ANSI refuses the cast).
  if (f == TypeId::kDate && (to->is_numeric() || to->id() == TypeId::kBoolean)) return MakeNullColumn(to, from.length);
  switch (to->id()) {
    case TypeId::kString:
    case TypeId::kBinary: return CastToString(from, to);
    case TypeId::kBoolean:
      if (f == TypeId::kString) {
        return FixedCast<uint8_t>(from, to, [&](int64_t i, uint8_t* out) {
          auto v = ParseBoolean(from.View(i));
          if (!v) return false;
          *out = *v;
          return true;
        });
      }
      return FixedCast<uint8_t>(from, to, [&](int64_t i, uint8_t* out) {
        if (f == TypeId::kDecimal) *out = from.Value<int128_t>(i) != 0;
        else *out = AsDouble(from, i) != 0;
        return true;
      });
    case TypeId::kByte: return CastToIntegral<int8_t>(from, to, strict);
    case TypeId::kShort: return CastToIntegral<int16_t>(from, to, strict);
    case TypeId::kInteger: return CastToIntegral<int32_t>(from, to, strict);
    case TypeId::kLong: return CastToIntegral<int64_t>(from, to, strict);
    case TypeId::kFloat: return CastToFloating<float>(from, to);
    case TypeId::kDouble: return CastToFloating<double>(from, to);
    case TypeId::kDecimal: return CastToDecimal(from, to);
    case TypeId::kDate:
      if (f == TypeId::kString) {
        return FixedCast<int32_t>(from, to, [&](int64_t i, int32_t* out) {
          auto v = ParseDate(from.View(i));
          if (!v) return false;
          *out = *v;
          return true;
        });
      }
      return FixedCast<int32_t>(from, to, [&](int64_t i, int32_t* out) {
        *out = static_cast<int32_t>(FloorDiv(from.Value<int64_t>(i), kMicrosPerDay));
        return true;
      });
    default:  // timestamp, timestamp_ntz
      if (f == TypeId::kString) {
        return FixedCast<int64_t>(from, to, [&](int64_t i, int64_t* out) {
          auto v = ParseTimestamp(from.View(i));
          if (!v) return false;
          *out = *v;
          return true;
        });
      }
      if (f == TypeId::kDate) {
        return FixedCast<int64_t>(from, to, [&](int64_t i, int64_t* out) {
          *out = static_cast<int64_t>(from.Value<int32_t>(i)) * kMicrosPerDay;
          return true;
        });
      }
      if (f == TypeId::kTimestamp || f == TypeId::kTimestampNtz) {
        return FixedCast<int64_t>(from, to, [&](int64_t i, int64_t* out) {
          *out = from.Value<int64_t>(i);
          return true;
        });
      }
      if (f == TypeId::kFloat || f == TypeId::kDouble || f == TypeId::kDecimal) {
        return FixedCast<int64_t>(from, to, [&](int64_t i, int64_t* out) {
          double seconds = AsDouble(from, i);
          if (!std::isfinite(seconds)) return false;
          *out = DoubleToIntegral<int64_t>(seconds * 1e6);
          return true;
        });
      }
      return FixedCast<int64_t>(from, to, [&](int64_t i, int64_t* out) {
        int64_t seconds = static_cast<int64_t>(AsInteger(from, i));
        if (__builtin_mul_overflow(seconds, kMicrosPerSecond, out)) *out = seconds < 0 ? INT64_MIN : INT64_MAX;
        return true;
      });
  }
}

}  // namespace

}  // namespace sluice::expr
