// FormatValue: one value as text, the way Spark prints it where Spark has a way.
//
// Floating point follows Java's Double.toString (what Spark shows): the shortest digits that
// read back to the same value, plain notation for magnitudes in [1e-3, 1e7) ("0.001", "1.0"),
// otherwise "1.0E7" / "1.0E-4". Decimals are exact, from the 128-bit unscaled value.
// Timestamps are ISO-8601 with microseconds, the fraction omitted when zero. Inside nested values
// strings, dates, timestamps and binary are quoted JSON strings, so the text reads as JSON.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sluice/core/civil_date.h"
#include "sluice/core/json_text.h"
#include "sluice/core/compute.h"

namespace sluice {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// Java's Double.toString / Float.toString from the shortest round-trip digits.
template <typename T>
void AppendFloating(T value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(value)) {
    out->append(value < 0 ? "-Infinity" : "Infinity");
    return;
  }
  if (value == 0) {
    out->append(std::signbit(value) ? "-0.0" : "0.0");
    return;
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string_view text(buffer, end - buffer);  // "-1.2345e+02"
  bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), text.data() + text.size(), exponent);
  if (negative) out->push_back('-');
  if (exponent >= -3 && exponent < 7) {
    if (exponent < 0) {
      out->append("0.");
      out->append(static_cast<size_t>(-exponent - 1), '0');
      out->append(digits);
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out->append(digits);
      out->append(exponent + 1 - digits.size(), '0');
      out->append(".0");
    } else {
      out->append(digits, 0, exponent + 1);
      out->push_back('.');
      out->append(digits, exponent + 1);
    }
    return;
  }
  out->push_back(digits[0]);
  out->push_back('.');
  out->append(digits.size() > 1 ? std::string_view(digits).substr(1) : std::string_view("0"));
  fmt::format_to(std::back_inserter(*out), "E{}", exponent);
}

__extension__ typedef unsigned __int128 uint128_t;

}  // namespace

void AppendDecimalText(int128_t value, int scale, std::string* out) {
  uint128_t magnitude = value < 0 ? -static_cast<uint128_t>(value) : static_cast<uint128_t>(value);
  char digits[48];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  while (count <= scale) digits[count++] = '0';  // at least one digit before the point
  if (value < 0) out->push_back('-');
  for (int i = count - 1; i >= 0; --i) {
    out->push_back(digits[i]);
    if (i == scale && scale > 0) out->push_back('.');
  }
}

std::string DecimalText(int128_t unscaled, int scale) {
  std::string text;
  AppendDecimalText(unscaled, scale, &text);
  return text;
}

namespace {

void AppendDate(int64_t days, std::string* out) {
  const auto [year, month, day] = CivilFromDays(days);
  if (year < 0) {
    fmt::format_to(std::back_inserter(*out), "-{:04}-{:02}-{:02}", -year, month, day);
  } else {
    fmt::format_to(std::back_inserter(*out), "{:04}-{:02}-{:02}", year, month, day);
  }
}

void AppendTimestamp(int64_t micros, bool utc, std::string* out) {
  int64_t days = micros / kMicrosPerDay;
  int64_t of_day = micros % kMicrosPerDay;
  if (of_day < 0) {
    of_day += kMicrosPerDay;
    --days;
  }
  AppendDate(days, out);
  const int64_t seconds = of_day / kMicrosPerSecond;
  const int64_t fraction = of_day % kMicrosPerSecond;
  fmt::format_to(std::back_inserter(*out), "T{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
  if (fraction != 0) fmt::format_to(std::back_inserter(*out), ".{:06}", fraction);
  if (utc) out->push_back('Z');
}

}  // namespace

std::string TimestampText(int64_t micros) {
  std::string text;
  AppendTimestamp(micros, true, &text);
  return text;
}

int Base64DigitValue(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool IsBase64(std::string_view text) {
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') ++padding;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++padding;
  for (size_t i = 0; i < text.size(); ++i) {
    if (Base64DigitValue(text[i]) < 0 && (text[i] != '=' || i < text.size() - padding)) return false;
  }
  return true;
}

bool AppendBase64Decoded(BinaryBuilder* builder, std::string_view text) {
  // Checked whole before anything is appended: a builder cannot take a value back.
  if (!IsBase64(text)) return false;
  size_t padding = text.empty() ? 0 : (text.back() == '=') + (text.size() >= 2 && text[text.size() - 2] == '=');
  int64_t size = static_cast<int64_t>(text.size() / 4 * 3 - padding);
  uint8_t* out = builder->AppendUninitialized(size);
  int64_t written = 0;
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t bits = 0;
    for (size_t k = 0; k < 4; ++k) bits = bits << 6 | static_cast<uint32_t>(std::max(0, Base64DigitValue(text[i + k])));
    for (int k = 2; k >= 0 && written < size; --k) out[written++] = static_cast<uint8_t>(bits >> (8 * k));
  }
  return true;
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                 static_cast<uint8_t>(bytes[i + 2]);
    out->push_back(kAlphabet[n >> 18]);
    out->push_back(kAlphabet[(n >> 12) & 63]);
    out->push_back(kAlphabet[(n >> 6) & 63]);
    out->push_back(kAlphabet[n & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 0) return;
  uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
  if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
  out->push_back(kAlphabet[n >> 18]);
  out->push_back(kAlphabet[(n >> 12) & 63]);
  out->push_back(rest == 2 ? kAlphabet[(n >> 6) & 63] : '=');
  out->push_back('=');
}

namespace {

// The ways a value is written: FormatValue's text at top level, the same inside a nested value
// (strings, dates, timestamps and binary quoted so the whole reads as JSON), and JSON proper
// (non-finite floats quoted as well, since JSON has no NaN; decimals quoted too unless the reader
// keeps numbers exact).
enum class Form { kText, kNestedText, kJson, kJsonBareDecimals };

bool IsJson(Form form) { return form == Form::kJson || form == Form::kJsonBareDecimals; }

// Appends a value that reads as a string: quoted except in top-level text.
void AppendText(std::string_view text, Form form, std::string* out) {
  if (form == Form::kText) {
    out->append(text);
  } else {
    AppendJsonString(out, text);
  }
}

template <typename T>
void AppendFloatingIn(T value, Form form, std::string* out) {
  if (IsJson(form) && !std::isfinite(value)) {
    std::string text;
    AppendFloating(value, &text);
    AppendJsonString(out, text);
  } else {
    AppendFloating(value, out);
  }
}

void Append(const Column& column, int64_t row, Form form, std::string* out) {
  if (column.IsNull(row)) {
    out->append("null");
    return;
  }
  const DataType& type = *column.type;
  const Form inner = IsJson(form) ? form : Form::kNestedText;
  auto out_it = std::back_inserter(*out);
  switch (type.id()) {
    case TypeId::kBoolean: out->append(column.Value<uint8_t>(row) ? "true" : "false"); return;
    case TypeId::kByte: fmt::format_to(out_it, "{}", column.Value<int8_t>(row)); return;
    case TypeId::kShort: fmt::format_to(out_it, "{}", column.Value<int16_t>(row)); return;
    case TypeId::kInteger: fmt::format_to(out_it, "{}", column.Value<int32_t>(row)); return;
    case TypeId::kLong: fmt::format_to(out_it, "{}", column.Value<int64_t>(row)); return;
    case TypeId::kFloat: AppendFloatingIn(column.Value<float>(row), form, out); return;
    case TypeId::kDouble: AppendFloatingIn(column.Value<double>(row), form, out); return;
    case TypeId::kDecimal:
      if (form == Form::kJson) out->push_back('"');
      AppendDecimalText(column.Value<int128_t>(row), type.scale(), out);
      if (form == Form::kJson) out->push_back('"');
      return;
    case TypeId::kString: AppendText(column.View(row), form, out); return;
    case TypeId::kBinary:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string text;
      if (type.id() == TypeId::kBinary) {
        AppendBase64(column.View(row), &text);
      } else if (type.id() == TypeId::kDate) {
        AppendDate(column.Value<int32_t>(row), &text);
      } else {
        AppendTimestamp(column.Value<int64_t>(row), type.id() == TypeId::kTimestamp, &text);
      }
      AppendText(text, form, out);
      return;
    }
    case TypeId::kStruct:
      out->push_back('{');
      for (int i = 0; i < type.num_fields(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJsonString(out, type.field(i).name);
        out->push_back(':');
        Append(*column.children[i], row, inner, out);
      }
      out->push_back('}');
      return;
    case TypeId::kArray:
      out->push_back('[');
      for (int64_t e = column.offsets[row]; e < column.offsets[row + 1]; ++e) {
        if (e > column.offsets[row]) out->push_back(',');
        Append(*column.children[0], e, inner, out);
      }
      out->push_back(']');
      return;
    case TypeId::kMap: {
      // Keys become JSON object keys: the key's own text, quoted.
      const Column& keys = *column.children[0];
      out->push_back('{');
      std::string key;
      for (int64_t e = column.offsets[row]; e < column.offsets[row + 1]; ++e) {
        if (e > column.offsets[row]) out->push_back(',');
        key.clear();
        Append(keys, e, Form::kText, &key);
        AppendJsonString(out, key);
        out->push_back(':');
        Append(*column.children[1], e, inner, out);
      }
      out->push_back('}');
      return;
    }
  }
}

}  // namespace

std::string FormatValue(const Column& column, int64_t row) {
  std::string out;
  Append(column, row, Form::kText, &out);
  return out;
}

void AppendValue(const Column& column, int64_t row, std::string* out) { Append(column, row, Form::kText, out); }

void AppendValueJson(const Column& column, int64_t row, std::string* out, JsonDecimals decimals) {
  Append(column, row, decimals == JsonDecimals::kQuoted ? Form::kJson : Form::kJsonBareDecimals, out);
}

void AppendDoubleText(double value, std::string* out) { AppendFloating(value, out); }
void AppendFloatText(float value, std::string* out) { AppendFloating(value, out); }

}  // namespace sluice
