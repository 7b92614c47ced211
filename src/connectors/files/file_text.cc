#include "connectors/files/file_text.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/iso_datetime.h"
#include "sluice/core/utf8.h"

namespace sluice::connectors::file_text {
namespace {

__extension__ typedef unsigned __int128 uint128_t;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool ParseDecimal(std::string_view text, int precision, int scale, int128_t* value) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  uint128_t magnitude = 0;
  int integer_digits = 0, fraction_digits = 0;
  bool any_digit = false;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    any_digit = true;
    if (magnitude == 0 && text[i] == '0') continue;  // leading zeros count for nothing
    magnitude = magnitude * 10 + (text[i] - '0');
    if (++integer_digits > precision - scale) return false;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && IsDigit(text[i]); ++i) {
      any_digit = true;
      if (++fraction_digits > scale) return false;
      magnitude = magnitude * 10 + (text[i] - '0');
    }
  }
  if (!any_digit || i != text.size()) return false;
  for (; fraction_digits < scale; ++fraction_digits) magnitude *= 10;
  *value = negative ? -static_cast<int128_t>(magnitude) : static_cast<int128_t>(magnitude);
  return true;
}

template <typename T>
bool ParseInteger(std::string_view text, T* value) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

template <typename T>
bool ParseFloating(std::string_view text, T* value) {
  if (text == "NaN") {
    *value = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  if (text == "Infinity" || text == "+Infinity" || text == "-Infinity") {
    *value = text[0] == '-' ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    return true;
  }
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

template <typename T>
bool AppendParsedInteger(ColumnBuilder* builder, std::string_view text) {
  T value;
  if (!ParseInteger(text, &value)) return false;
  static_cast<FixedWidthBuilder<T>*>(builder)->Append(value);
  return true;
}

}  // namespace

bool AppendScalar(ColumnBuilder* builder, std::string_view text, std::string* why) {
  const DataType& type = *builder->type();
  bool ok = false;
  switch (type.id()) {
    case TypeId::kBoolean:
      if (EqualsIgnoreCase(text, "true") || EqualsIgnoreCase(text, "false")) {
        static_cast<BooleanBuilder*>(builder)->Append(text.size() == 4 ? 1 : 0);
        ok = true;
      }
      break;
    case TypeId::kByte:
      ok = AppendParsedInteger<int8_t>(builder, text);
      break;
    case TypeId::kShort:
      ok = AppendParsedInteger<int16_t>(builder, text);
      break;
    case TypeId::kInteger:
      ok = AppendParsedInteger<int32_t>(builder, text);
      break;
    case TypeId::kLong:
      ok = AppendParsedInteger<int64_t>(builder, text);
      break;
    case TypeId::kFloat: {
      float value;
      ok = ParseFloating(text, &value);
      if (ok) static_cast<FloatBuilder*>(builder)->Append(value);
      break;
    }
    case TypeId::kDouble: {
      double value;
      ok = ParseFloating(text, &value);
      if (ok) static_cast<DoubleBuilder*>(builder)->Append(value);
      break;
    }
    case TypeId::kDecimal: {
      int128_t value;
      ok = ParseDecimal(text, type.precision(), type.scale(), &value);
      if (ok) static_cast<DecimalBuilder*>(builder)->Append(value);
      break;
    }
    case TypeId::kString:
      if (!IsValidUtf8(text)) {
        *why = "not valid UTF-8";
        return false;
      }
      static_cast<BinaryBuilder*>(builder)->Append(text);
      ok = true;
      break;
    case TypeId::kBinary:
      ok = AppendBase64Decoded(static_cast<BinaryBuilder*>(builder), text);
      break;
    case TypeId::kDate: {
      int32_t days = 0;
      ok = ParseIsoDate(text, &days);
      if (ok) static_cast<Int32Builder*>(builder)->Append(days);
      break;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      int64_t micros = 0;
      bool has_zone = false;
      ok = ParseIsoTimestamp(text, &micros, &has_zone) && (!has_zone || type.id() == TypeId::kTimestamp);
      if (ok) static_cast<Int64Builder*>(builder)->Append(micros);
      break;
    }
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap:
      return AppendJsonText(builder, text, why);
  }
  if (!ok) {
    constexpr size_t kShown = 40;
    *why = fmt::format("`{}{}` is not a valid {}", text.substr(0, kShown), text.size() > kShown ? "..." : "",
                       type.ToString());
  }
  return ok;
}

}  // namespace sluice::connectors::file_text
