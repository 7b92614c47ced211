#include "expr/java_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <cctype>
#include <optional>

#include "expr/kernel_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

struct Spec {
  std::string_view text;  // the specifier as written, for errors
  int index = 0;          // 1-based explicit argument; -1: the previous one (`<`); 0: the next ordinary one
  bool left = false, alternate = false, plus = false, space = false, zero = false, group = false, paren = false;
  int width = -1;
  int precision = -1;
  char conversion = 0;
};

// Each flag and the field it sets.
constexpr std::pair<char, bool Spec::*> kFlags[] = {{'-', &Spec::left}, {'#', &Spec::alternate}, {'+', &Spec::plus},
                                                    {' ', &Spec::space}, {'0', &Spec::zero},     {',', &Spec::group},
                                                    {'(', &Spec::paren}};

Status Bad(const Spec& spec, std::string_view why) {
  return Status::Error(errors::kInvalidParameterValue, fmt::format("format specifier '{}': {}", spec.text, why));
}

// Parses the specifier starting at pattern[at] == '%'; `at` moves past it.
Result<Spec> ParseSpec(std::string_view pattern, size_t& at) {
  Spec spec;
  const size_t start = at++;
  auto digits = [&](size_t from) {
    size_t end = from;
    while (end < pattern.size() && pattern[end] >= '0' && pattern[end] <= '9') ++end;
    return end;
  };
  auto number = [&](size_t from, size_t to) {
    int value = 0;
    // Beyond an int: the largest, which no bound or argument list admits.
    if (std::from_chars(pattern.data() + from, pattern.data() + to, value).ec != std::errc()) return INT_MAX;
    return value;
  };
  // An explicit index: digits then '$'.
  if (size_t end = digits(at); end > at && end < pattern.size() && pattern[end] == '$') {
    spec.index = number(at, end);
    at = end + 1;
  }
  // The flags, each at most once.
  for (; at < pattern.size(); ++at) {
    const char c = pattern[at];
    if (c == '<' && spec.index == 0) {
      spec.index = -1;
      continue;
    }
    const auto* flag = std::find_if(std::begin(kFlags), std::end(kFlags), [c](const auto& f) { return f.first == c; });
    if (flag == std::end(kFlags)) break;
    if (spec.*(flag->second)) {
      spec.text = pattern.substr(start, at + 1 - start);
      return Bad(spec, fmt::format("the flag '{}' is given twice", c));
    }
    spec.*(flag->second) = true;
  }
  if (size_t end = digits(at); end > at) {
    spec.width = number(at, end);
    at = end;
  }
  if (at < pattern.size() && pattern[at] == '.') {
    const size_t end = digits(at + 1);
    if (end == at + 1) {
      spec.text = pattern.substr(start, end - start);
      return Bad(spec, "a '.' takes a precision");
    }
    spec.precision = number(at + 1, end);
    at = end;
  }
  if (at >= pattern.size()) {
    spec.text = pattern.substr(start);
    return Bad(spec, "the pattern ends before the conversion");
  }
  spec.conversion = pattern[at++];
  spec.text = pattern.substr(start, at - start);
  if (spec.width > kMaxMadeValueBytes || spec.precision > kMaxMadeValueBytes) {
    return Bad(spec, fmt::format("a width or precision above {} MiB makes a value too large", kMaxMadeValueBytes >> 20));
  }
  return spec;
}

// Flags and precision a conversion does not take.
Status CheckSpec(const Spec& s) {
  const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s.conversion)));
  if ((s.left || s.zero) && s.width < 0) return Bad(s, "the flags '-' and '0' need a width");
  if (s.left && s.zero) return Bad(s, "the flags '-' and '0' exclude each other");
  if (s.plus && s.space) return Bad(s, "the flags '+' and ' ' exclude each other");
  auto only = [&](std::string_view allowed) -> Status {
    for (const auto& [flag, field] : kFlags) {
      if (s.*field && allowed.find(flag) == std::string_view::npos) {
        return Bad(s, fmt::format("the conversion '{}' does not take the flag '{}'", s.conversion, flag));
      }
    }
    return Status::OK();
  };
  switch (c) {
    case 'b': case 's': case 'c': return only("-");
    case 'd': return only("-+ 0,(");
    case 'o': case 'x': return only("-#0");
    case 'e': return only("-#+ 0(");
    case 'f': return only("-#+ 0,(");
    case 'g': return only("-+ 0,(");
    case 'a': return only("-#+ 0");
    default: return Status::OK();
  }
}

// The upper-case conversions (%S, %X, %E ...) upper-case as upper() does.
std::string Upper(const std::string& text) {
  std::string upper;
  ChangeCase(text, true, &upper);
  return upper;
}

void AppendPadded(const Spec& s, std::string body, std::string* out) {
  if (s.width > static_cast<int>(body.size())) {
    const std::string pad(static_cast<size_t>(s.width) - body.size(), ' ');
    body = s.left ? body + pad : pad + body;
  }
  out->append(body);
}

// The shortest decimal digits of a finite |value| > 0 and the exponent of the first:
// value = 0.d1d2d3... × 10^(exponent + 1).
void ShortestDigits(double value, std::string* digits, int* exponent) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, std::fabs(value), std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  const size_t e = text.find('e');
  digits->clear();
  for (char ch : text.substr(0, e)) {
    if (ch != '.') digits->push_back(ch);
  }
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0), text.data() + text.size(), *exponent);
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
}

// Rounds the digits (of a value whose first digit has `exponent`) HALF_UP to keep `keep` of them;
// the exponent moves up when 9.99 becomes 10.0. keep <= 0 rounds to zero or to one unit.
void RoundHalfUp(std::string* digits, int* exponent, int keep) {
  if (keep >= static_cast<int>(digits->size())) return;
  if (keep < 0) {
    digits->assign("0");
    return;
  }
  const bool up = (*digits)[static_cast<size_t>(keep)] >= '5';
  digits->resize(static_cast<size_t>(keep));
  if (up) {
    int i = keep - 1;
    for (; i >= 0; --i) {
      if ((*digits)[static_cast<size_t>(i)] == '9') {
        (*digits)[static_cast<size_t>(i)] = '0';
      } else {
        ++(*digits)[static_cast<size_t>(i)];
        break;
      }
    }
    if (i < 0) {
      digits->insert(digits->begin(), '1');
      ++*exponent;
    }
  }
  if (digits->empty()) digits->assign("0");
}

// |value| in fixed notation with `precision` decimals.
std::string FixedText(double value, int precision) {
  if (value == 0) return precision > 0 ? "0." + std::string(static_cast<size_t>(precision), '0') : "0";
  std::string digits;
  int exponent = 0;
  ShortestDigits(value, &digits, &exponent);
  // Digits kept: those before the point (exponent + 1) plus `precision` after it.
  const int keep = exponent + 1 + precision;
  if (keep <= 0) {
    // Below half of the last place unless exactly the first place after it rounds up.
    const bool up = keep == 0 && digits[0] >= '5';
    std::string text = precision > 0 ? "0." + std::string(static_cast<size_t>(precision), '0') : "0";
    if (up) text.back() = '1';
    return text;
  }
  RoundHalfUp(&digits, &exponent, keep);
  std::string integer, fraction;
  for (int position = exponent; position >= 0 || position > exponent; --position) {
    const int i = exponent - position;
    integer.push_back(i < static_cast<int>(digits.size()) ? digits[static_cast<size_t>(i)] : '0');
    if (position == 0) break;
  }
  if (exponent < 0) integer = "0";
  for (int p = 1; p <= precision; ++p) {
    const int i = exponent + p;
    fraction.push_back(i >= 0 && i < static_cast<int>(digits.size()) ? digits[static_cast<size_t>(i)] : '0');
  }
  return precision > 0 ? integer + "." + fraction : integer;
}

// |value| in scientific notation with `precision` decimals: d.ddde+XX.
std::string ScientificText(double value, int precision) {
  std::string digits = "0";
  int exponent = 0;
  if (value != 0) {
    ShortestDigits(value, &digits, &exponent);
    RoundHalfUp(&digits, &exponent, precision + 1);
  }
  std::string text(1, digits[0]);
  if (precision > 0) {
    text.push_back('.');
    for (int i = 1; i <= precision; ++i) text.push_back(i < static_cast<int>(digits.size()) ? digits[static_cast<size_t>(i)] : '0');
  }
  return text + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
}

// Groups of three digits, with ',', in the integer part of a plain number.
std::string Grouped(const std::string& number) {
  const size_t point = std::min(number.find('.'), number.size());
  std::string grouped;
  for (size_t i = 0; i < point; ++i) {
    if (i > 0 && (point - i) % 3 == 0) grouped.push_back(',');
    grouped.push_back(number[i]);
  }
  return grouped + number.substr(point);
}

// Sign, parentheses and zero padding around the magnitude of a number.
void AppendNumber(const Spec& s, bool negative, std::string magnitude, std::string_view prefix, std::string* out) {
  std::string lead = negative ? (s.paren ? "(" : "-") : s.plus ? "+" : s.space ? " " : "";
  lead += prefix;
  const std::string trail = negative && s.paren ? ")" : "";
  if (s.zero) {
    const int length = static_cast<int>(lead.size() + magnitude.size() + trail.size());
    if (s.width > length) magnitude.insert(0, static_cast<size_t>(s.width - length), '0');
  }
  AppendPadded(s, lead + magnitude + trail, out);
}

std::string TextOf(const FormatArgument& a) {
  switch (a.kind) {
    case FormatArgument::Kind::kNull: return "null";
    case FormatArgument::Kind::kBoolean: return a.boolean ? "true" : "false";
    case FormatArgument::Kind::kIntegral: return std::to_string(a.integral);
    case FormatArgument::Kind::kFloating:
      return a.is_float ? JavaFloatString(static_cast<float>(a.floating)) : JavaDoubleString(a.floating);
    case FormatArgument::Kind::kText: return std::string(a.text);
  }
  return "";
}

std::string_view KindName(const FormatArgument& a) {
  switch (a.kind) {
    case FormatArgument::Kind::kNull: return "null";
    case FormatArgument::Kind::kBoolean: return "a boolean";
    case FormatArgument::Kind::kIntegral: return "an integral number";
    case FormatArgument::Kind::kFloating: return "a floating-point number";
    case FormatArgument::Kind::kText: return "a string or decimal";
  }
  return "";
}

// Java's Double.toHexString, for %a without a precision.
std::string HexFloat(double magnitude) {
  if (magnitude == 0) return "0x0.0p0";
  uint64_t bits;
  std::memcpy(&bits, &magnitude, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((uint64_t{1} << 52) - 1);
  std::string hex = fmt::format("{:013x}", mantissa);
  while (hex.size() > 1 && hex.back() == '0') hex.pop_back();
  if (biased == 0) return "0x0." + hex + "p-1022";
  return "0x1." + hex + "p" + std::to_string(biased - 1023);
}

Status AppendConversion(const Spec& s, const FormatArgument& a, std::string* out) {
  const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s.conversion)));
  const bool upper = std::isupper(static_cast<unsigned char>(s.conversion)) != 0;
  auto finish = [&](std::string text) {
    if (s.precision >= 0 && static_cast<int>(text.size()) > s.precision) text.resize(static_cast<size_t>(s.precision));
    AppendPadded(s, upper ? Upper(std::move(text)) : std::move(text), out);
    return Status::OK();
  };
  if (c == 's') return finish(TextOf(a));
  if (c == 'b') {
    return finish(a.kind == FormatArgument::Kind::kNull ? "false"
                  : a.kind == FormatArgument::Kind::kBoolean ? (a.boolean ? "true" : "false") : "true");
  }
  if (a.kind == FormatArgument::Kind::kNull) {
    if (c == 'c' && s.precision >= 0) return Bad(s, "%c takes no precision");
    return finish("null");
  }
  auto mismatch = [&] { return Bad(s, fmt::format("%{} cannot format {}", s.conversion, KindName(a))); };
  switch (c) {
    case 'c': {
      if (s.precision >= 0) return Bad(s, "%c takes no precision");
      if (a.kind != FormatArgument::Kind::kIntegral || a.bits > 32) return mismatch();
      if (a.integral < 0 || a.integral > 0x10FFFF || (a.integral >= 0xD800 && a.integral <= 0xDFFF)) {
        return Bad(s, fmt::format("{} is no code point", a.integral));
      }
      std::string text;
      AppendUtf8(static_cast<uint32_t>(a.integral), &text);
      AppendPadded(s, upper ? Upper(text) : text, out);
      return Status::OK();
    }
    case 'd': {
      if (s.precision >= 0) return Bad(s, "%d takes no precision");
      if (a.kind != FormatArgument::Kind::kIntegral) return mismatch();
      const bool negative = a.integral < 0;
      std::string magnitude = negative ? std::to_string(static_cast<uint64_t>(0) - static_cast<uint64_t>(a.integral))
                                       : std::to_string(a.integral);
      if (s.group) magnitude = Grouped(magnitude);
      AppendNumber(s, negative, std::move(magnitude), "", out);
      return Status::OK();
    }
    case 'o': case 'x': {
      if (s.precision >= 0) return Bad(s, fmt::format("%{} takes no precision", s.conversion));
      if (a.kind != FormatArgument::Kind::kIntegral) return mismatch();
      uint64_t bits = static_cast<uint64_t>(a.integral);
      if (a.bits < 64) bits &= (uint64_t{1} << a.bits) - 1;
      std::string digits = c == 'o' ? fmt::format("{:o}", bits) : fmt::format("{:x}", bits);
      std::string prefix = s.alternate ? (c == 'o' ? "0" : "0x") : "";
      Spec unsigned_spec = s;
      unsigned_spec.plus = unsigned_spec.space = unsigned_spec.paren = false;
      std::string text;
      AppendNumber(unsigned_spec, false, std::move(digits), prefix, &text);
      out->append(upper ? Upper(text) : text);
      return Status::OK();
    }
    case 'e': case 'f': case 'g': case 'a': {
      if (a.kind != FormatArgument::Kind::kFloating) return mismatch();
      const double value = a.floating;
      const bool negative = std::signbit(value) && !std::isnan(value);
      if (!std::isfinite(value)) {
        // Java pads NaN and the infinities with spaces, never zeros.
        Spec spaced = s;
        spaced.zero = false;
        std::string text = std::isnan(value) ? "NaN" : "Infinity";
        if (std::isnan(value)) {
          AppendPadded(spaced, text, out);
        } else {
          AppendNumber(spaced, negative, text, "", out);
        }
        return Status::OK();
      }
      const double magnitude = std::fabs(value);
      std::string text;
      if (c == 'a') {
        if (s.precision >= 0) return Bad(s, "%a with a precision is not supported");
        text = HexFloat(magnitude);
        Spec plain = s;
        std::string body;
        AppendNumber(plain, negative, text.substr(2), "0x", &body);
        out->append(upper ? Upper(body) : body);
        return Status::OK();
      }
      const int precision = s.precision < 0 ? 6 : s.precision;
      if (c == 'f') {
        text = FixedText(magnitude, precision);
        if (s.alternate && precision == 0) text += ".";
      } else if (c == 'e') {
        text = ScientificText(magnitude, precision);
        if (s.alternate && precision == 0) text.insert(1, ".");
      } else {
        // %g: `precision` significant digits, scientific outside [10^-4, 10^precision).
        const int significant = precision == 0 ? 1 : precision;
        int exponent = 0;
        if (magnitude != 0) {
          std::string digits;
          ShortestDigits(magnitude, &digits, &exponent);
          RoundHalfUp(&digits, &exponent, significant);
        }
        if (magnitude != 0 && (exponent < -4 || exponent >= significant)) {
          text = ScientificText(magnitude, significant - 1);
        } else {
          text = FixedText(magnitude, std::max(0, significant - 1 - (magnitude == 0 ? 0 : exponent)));
        }
      }
      if (s.group && c != 'e' && text.find('e') == std::string::npos) text = Grouped(text);
      std::string body;
      AppendNumber(s, negative, std::move(text), "", &body);
      out->append(upper ? Upper(body) : body);
      return Status::OK();
    }
    default:
      return Bad(s, fmt::format("'{}' is no conversion sluice formats (date/time %t and hash %h are not supported)",
                                s.conversion));
  }
}

}  // namespace

Status AppendJavaFormat(std::string_view pattern, std::span<const FormatArgument> arguments, std::string* out) {
  int ordinary = 0;  // the last ordinary index used
  int last = 0;      // the argument the last specifier used, for `<`
  for (size_t at = 0; at < pattern.size();) {
    const size_t percent = pattern.find('%', at);
    out->append(pattern.substr(at, percent == std::string_view::npos ? std::string_view::npos : percent - at));
    if (percent == std::string_view::npos) break;
    at = percent;
    SLUICE_ASSIGN_OR_RETURN(Spec spec, ParseSpec(pattern, at));
    if (spec.conversion == '%') {
      if (spec.precision >= 0) return Bad(spec, "%% takes no precision");
      if (spec.alternate || spec.plus || spec.space || spec.zero || spec.group || spec.paren) {
        return Bad(spec, "%% takes only the flag '-'");
      }
      if (spec.left && spec.width < 0) return Bad(spec, "the flag '-' needs a width");
      AppendPadded(spec, "%", out);
      continue;
    }
    if (spec.conversion == 'n') {
      if (spec.width >= 0 || spec.precision >= 0) return Bad(spec, "%n takes no width or precision");
      out->push_back('\n');
      continue;
    }
    if (std::string_view("bBsScCdoxXeEfgGaA").find(spec.conversion) == std::string_view::npos) {
      return Bad(spec, fmt::format("'{}' is no conversion sluice formats (date/time %t and hash %h are not supported)",
                                   spec.conversion));
    }
    SLUICE_RETURN_IF_ERROR(CheckSpec(spec));
    const int index = spec.index > 0 ? spec.index : spec.index < 0 ? last : ++ordinary;
    if (index < 1 || index > static_cast<int>(arguments.size())) return Bad(spec, "there is no argument for it");
    last = index;
    SLUICE_RETURN_IF_ERROR(AppendConversion(spec, arguments[static_cast<size_t>(index - 1)], out));
    if (static_cast<int64_t>(out->size()) > kMaxMadeValueBytes) {
      return Bad(spec, fmt::format("the formatted value passes {} MiB", kMaxMadeValueBytes >> 20));
    }
  }
  return Status::OK();
}

}  // namespace sluice::expr
