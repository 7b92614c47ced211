#include "expr/datetime.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "sluice/core/ascii.h"
#include "sluice/core/civil_date.h"

namespace sluice::expr {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Reads 1..max_digits digits at `pos`; nullopt when there is none.
std::optional<int64_t> ReadNumber(std::string_view s, size_t* pos, int min_digits, int max_digits) {
  size_t start = *pos;
  int64_t value = 0;
  while (*pos < s.size() && IsDigit(s[*pos]) && static_cast<int>(*pos - start) < max_digits) {
    value = value * 10 + (s[*pos] - '0');
    ++*pos;
  }
  if (static_cast<int>(*pos - start) < min_digits) return std::nullopt;
  return value;
}

// The date part of a date or timestamp; leaves `pos` after it.
std::optional<int64_t> ReadDatePart(std::string_view s, size_t* pos) {
  // Spark reads an optional sign before the year ("+2024-02-29", "-0044-03-15").
  bool negative = false;
  if (*pos < s.size() && (s[*pos] == '+' || s[*pos] == '-')) negative = s[(*pos)++] == '-';
  auto year = ReadNumber(s, pos, 4, 7);
  if (!year) return std::nullopt;
  if (negative) *year = -*year;
  int64_t month = 1, day = 1;
  if (*pos < s.size() && s[*pos] == '-') {
    ++*pos;
    auto m = ReadNumber(s, pos, 1, 2);
    if (!m) return std::nullopt;
    month = *m;
    if (*pos < s.size() && s[*pos] == '-') {
      ++*pos;
      auto d = ReadNumber(s, pos, 1, 2);
      if (!d) return std::nullopt;
      day = *d;
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(*year, static_cast<int>(month))) return std::nullopt;
  return DaysFromCivil(*year, static_cast<int>(month), static_cast<int>(day));
}

const char* const kMonthNames[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
const char* const kDayNames[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};  // day 0 = Thursday
const char* const kFullMonthNames[] = {"January", "February", "March",     "April",   "May",      "June",
                                       "July",    "August",   "September", "October", "November", "December"};
const char* const kFullDayNames[] = {"Thursday", "Friday",  "Saturday", "Sunday",
                                     "Monday",   "Tuesday", "Wednesday"};

void AppendPadded(std::string* out, int64_t value, int width) {
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), "%0*lld", width, static_cast<long long>(value));
  out->append(buf, static_cast<size_t>(n));
}

}  // namespace

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t AddMonths(int64_t days, int32_t months) {
  CivilDate c = CivilFromDays(days);
  int64_t total = c.year * 12 + (c.month - 1) + months;
  int64_t year = FloorDiv(total, 12);
  int month = static_cast<int>(total - year * 12) + 1;
  int day = std::min(c.day, DaysInMonth(year, month));
  return DaysFromCivil(year, month, day);
}

std::optional<int64_t> ParseDurationMicros(std::string_view text, bool* month_or_year) {
  *month_or_year = false;
  std::vector<std::string> words;
  for (size_t at = 0; at < text.size();) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    size_t end = at;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end > at) words.push_back(AsciiLower(text.substr(at, end - at)));
    at = end;
  }
  size_t first = !words.empty() && words[0] == "interval" ? 1 : 0;
  if (words.size() == first || (words.size() - first) % 2 != 0) return std::nullopt;
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"week", 7 * kMicrosPerDay}, {"day", kMicrosPerDay},       {"hour", 3600 * kMicrosPerSecond},
      {"minute", 60 * kMicrosPerSecond}, {"second", kMicrosPerSecond}, {"millisecond", 1000},
      {"microsecond", 1}};
  int64_t total = 0;
  for (size_t i = first; i < words.size(); i += 2) {
    std::string unit = words[i + 1];
    if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
    if (unit == "month" || unit == "year") {
      *month_or_year = true;
      return std::nullopt;
    }
    const auto* known = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const auto& u) { return u.first == unit; });
    if (known == std::end(kUnits)) return std::nullopt;
    std::string_view number = words[i];
    const bool negative = !number.empty() && number[0] == '-';
    if (!number.empty() && (number[0] == '-' || number[0] == '+')) number.remove_prefix(1);
    const size_t point = number.find('.');
    std::string_view whole = number.substr(0, point);
    std::string_view fraction = point == std::string_view::npos ? std::string_view() : number.substr(point + 1);
    // Only seconds take a fraction, of at most six digits.
    if (whole.empty() || whole.size() > 12 || whole.find_first_not_of("0123456789") != std::string_view::npos ||
        (point != std::string_view::npos && (unit != "second" || fraction.empty() || fraction.size() > 6 ||
                                             fraction.find_first_not_of("0123456789") != std::string_view::npos))) {
      return std::nullopt;
    }
    int64_t micros = 0;
    if (__builtin_mul_overflow(std::stoll(std::string(whole)), known->second, &micros)) return std::nullopt;
    if (!fraction.empty()) micros += std::stoll(std::string(fraction) + std::string(6 - fraction.size(), '0'));
    if (__builtin_add_overflow(total, negative ? -micros : micros, &total)) return std::nullopt;
  }
  return total;
}

std::optional<int32_t> ParseDate(std::string_view text) {
  std::string_view s = Trim(text);
  size_t pos = 0;
  auto days = ReadDatePart(s, &pos);
  if (!days) return std::nullopt;
  if (pos != s.size() && s[pos] != ' ' && s[pos] != 'T') return std::nullopt;
  return static_cast<int32_t>(*days);
}

std::optional<int64_t> ParseTimestamp(std::string_view text) {
  std::string_view s = Trim(text);
  size_t pos = 0;
  auto days = ReadDatePart(s, &pos);
  if (!days) return std::nullopt;
  int64_t micros = *days * kMicrosPerDay;
  if (pos < s.size() && (s[pos] == ' ' || s[pos] == 'T')) {
    ++pos;
    auto hour = ReadNumber(s, &pos, 1, 2);
    if (!hour || *hour > 23) return std::nullopt;
    int64_t minute = 0, second = 0, fraction = 0;
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      auto m = ReadNumber(s, &pos, 1, 2);
      if (!m || *m > 59) return std::nullopt;
      minute = *m;
      if (pos < s.size() && s[pos] == ':') {
        ++pos;
        auto sec = ReadNumber(s, &pos, 1, 2);
        if (!sec || *sec > 59) return std::nullopt;
        second = *sec;
        if (pos < s.size() && s[pos] == '.') {
          ++pos;
          int digits = 0;
          while (pos < s.size() && IsDigit(s[pos])) {
            if (digits < 6) fraction = fraction * 10 + (s[pos] - '0');
            ++digits;
            ++pos;
          }
          if (digits == 0 || digits > 9) return std::nullopt;
          for (int i = digits; i < 6; ++i) fraction *= 10;
        }
      }
    }
    micros += ((*hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction;
  }
  while (pos < s.size() && s[pos] == ' ') ++pos;
  if (pos == s.size()) return micros;
  std::string_view zone = s.substr(pos);
  if (zone == "Z" || zone == "UTC" || zone == "GMT") return micros;
  if (zone[0] != '+' && zone[0] != '-') return std::nullopt;
  int sign = zone[0] == '-' ? -1 : 1;
  size_t zpos = 1;
  auto zh = ReadNumber(zone, &zpos, 1, 2);
  if (!zh || *zh > 18) return std::nullopt;
  int64_t zm = 0;
  if (zpos < zone.size() && zone[zpos] == ':') ++zpos;
  if (zpos < zone.size()) {
    auto m = ReadNumber(zone, &zpos, 2, 2);
    if (!m || *m > 59) return std::nullopt;
    zm = *m;
  }
  if (zpos != zone.size()) return std::nullopt;
  return micros - sign * (*zh * 60 + zm) * 60 * kMicrosPerSecond;
}

std::string FormatDate(int32_t days) {
  CivilDate c = CivilFromDays(days);
  std::string out;
  // As Spark prints them: years beyond 9999 with a plus, years before 1 with a minus.
  if (c.year > 9999) out += '+';
  if (c.year < 0) out += '-';
  AppendPadded(&out, c.year < 0 ? -static_cast<int64_t>(c.year) : c.year, 4);
  out += '-';
  AppendPadded(&out, c.month, 2);
  out += '-';
  AppendPadded(&out, c.day, 2);
  return out;
}

std::string FormatTimestamp(int64_t micros) {
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  int64_t rest = micros - days * kMicrosPerDay;
  std::string out = FormatDate(static_cast<int32_t>(days));
  out += ' ';
  int64_t seconds = rest / kMicrosPerSecond;
  AppendPadded(&out, seconds / 3600, 2);
  out += ':';
  AppendPadded(&out, seconds / 60 % 60, 2);
  out += ':';
  AppendPadded(&out, seconds % 60, 2);
  int64_t fraction = rest % kMicrosPerSecond;
  if (fraction != 0) {
    std::string digits;
    AppendPadded(&digits, fraction, 6);
    while (digits.back() == '0') digits.pop_back();
    out += '.';
    out += digits;
  }
  return out;
}

std::optional<std::string> FormatWithPattern(int64_t micros, std::string_view pattern) {
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  int64_t rest = micros - days * kMicrosPerDay;
  CivilDate c = CivilFromDays(days);
  int64_t seconds = rest / kMicrosPerSecond;
  int64_t hour = seconds / 3600, minute = seconds / 60 % 60, second = seconds % 60;
  std::string out;
  for (size_t i = 0; i < pattern.size();) {
    char ch = pattern[i];
    if (ch == '\'') {
      size_t end = pattern.find('\'', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      if (end == i + 1) out += '\'';
      out.append(pattern.substr(i + 1, end - i - 1));
      i = end + 1;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      out += ch;
      ++i;
      continue;
    }
    size_t n = 1;
    while (i + n < pattern.size() && pattern[i + n] == ch) ++n;
    int width = static_cast<int>(n);
    switch (ch) {
      case 'y':
        if (n == 2) AppendPadded(&out, ((c.year % 100) + 100) % 100, 2);
        else AppendPadded(&out, c.year, width);
        break;
      case 'M':
        // Spark: MMM the short name, MMMM the full one; five or more letters are refused.
        if (n >= 5) return std::nullopt;
        if (n == 4) out += kFullMonthNames[c.month - 1];
        else if (n == 3) out += kMonthNames[c.month - 1];
        else AppendPadded(&out, c.month, width);
        break;
      case 'd': AppendPadded(&out, c.day, width); break;
      case 'D':
        if (n > 3) return std::nullopt;
        AppendPadded(&out, days - DaysFromCivil(c.year, 1, 1) + 1, width);
        break;
      case 'H': AppendPadded(&out, hour, width); break;
      case 'h': AppendPadded(&out, hour % 12 == 0 ? 12 : hour % 12, width); break;
      case 'm': AppendPadded(&out, minute, width); break;
      case 's': AppendPadded(&out, second, width); break;
      case 'S': {
        std::string digits;
        AppendPadded(&digits, rest % kMicrosPerSecond, 6);
        if (n > 6) digits.append(n - 6, '0');
        out += digits.substr(0, n);
        break;
      }
      case 'a': out += hour < 12 ? "AM" : "PM"; break;
      case 'E': {
        if (n >= 5) return std::nullopt;
        const int64_t weekday = ((days % 7) + 7) % 7;
        out += n == 4 ? kFullDayNames[weekday] : kDayNames[weekday];
        break;
      }
      default: return std::nullopt;
    }
    i += n;
  }
  return out;
}

std::optional<int64_t> ParseWithPattern(std::string_view text, std::string_view pattern) {
  int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, fraction = 0;
  bool pm = false, has_ampm = false;
  size_t pos = 0;
  for (size_t i = 0; i < pattern.size();) {
    char ch = pattern[i];
    if (ch == '\'') {
      size_t end = pattern.find('\'', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      std::string_view literal = end == i + 1 ? "'" : pattern.substr(i + 1, end - i - 1);
      if (text.substr(pos, literal.size()) != literal) return std::nullopt;
      pos += literal.size();
      i = end + 1;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      if (pos >= text.size() || text[pos] != ch) return std::nullopt;
      ++pos;
      ++i;
      continue;
    }
    size_t n = 1;
    while (i + n < pattern.size() && pattern[i + n] == ch) ++n;
    int min_digits = static_cast<int>(n);
    std::optional<int64_t> v;
    switch (ch) {
      case 'y':
        v = ReadNumber(text, &pos, n == 2 ? 2 : static_cast<int>(n), n == 2 ? 2 : 7);
        if (v && n == 2) *v += 2000;
        year = v.value_or(0);
        break;
      case 'M':
        if (n >= 3) {
          for (int m = 0; m < 12; ++m) {
            if (text.substr(pos, 3) == kMonthNames[m]) v = m + 1;
          }
          if (v) pos += 3;
        } else {
          v = ReadNumber(text, &pos, min_digits, 2);
        }
        month = v.value_or(0);
        break;
      case 'd': v = ReadNumber(text, &pos, min_digits, 2); day = v.value_or(0); break;
      case 'H': v = ReadNumber(text, &pos, min_digits, 2); hour = v.value_or(0); break;
      case 'h': v = ReadNumber(text, &pos, min_digits, 2); hour = v.value_or(0); has_ampm = true; break;
      case 'm': v = ReadNumber(text, &pos, min_digits, 2); minute = v.value_or(0); break;
      case 's': v = ReadNumber(text, &pos, min_digits, 2); second = v.value_or(0); break;
      case 'S': {
        size_t start = pos;
        v = ReadNumber(text, &pos, min_digits, static_cast<int>(n));
        if (v) {
          fraction = *v;
          for (size_t k = pos - start; k < 6; ++k) fraction *= 10;
          for (size_t k = pos - start; k > 6; --k) fraction /= 10;
        }
        break;
      }
      case 'a':
        if (text.substr(pos, 2) == "AM" || text.substr(pos, 2) == "PM") {
          pm = text[pos] == 'P';
          pos += 2;
          v = 0;
        }
        break;
      default: return std::nullopt;
    }
    if (!v) return std::nullopt;
    i += n;
  }
  if (pos != text.size()) return std::nullopt;
  if (has_ampm) {
    if (hour < 1 || hour > 12) return std::nullopt;
    hour = hour % 12 + (pm ? 12 : 0);
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, static_cast<int>(month)) || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  return DaysFromCivil(year, static_cast<int>(month), static_cast<int>(day)) * kMicrosPerDay +
         ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction;
}

}  // namespace sluice::expr
