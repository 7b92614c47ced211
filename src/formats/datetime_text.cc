#include "formats/datetime_text.h"

#include "sluice/core/civil_date.h"

namespace sluice::formats {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;

// Reads exactly `count` digits at `*pos`.
bool ReadDigits(std::string_view text, size_t* pos, int count, int64_t* value) {
  if (text.size() - *pos < static_cast<size_t>(count)) return false;
  int64_t result = 0;
  for (int i = 0; i < count; ++i) {
    char c = text[*pos + i];
    if (c < '0' || c > '9') return false;
    result = result * 10 + (c - '0');
  }
  *pos += count;
  *value = result;
  return true;
}

bool IsLeap(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

unsigned DaysInMonth(int64_t year, unsigned month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeap(year) ? 29 : kDays[month - 1];
}

bool ParseDateAt(std::string_view text, size_t* pos, int64_t* days) {
  int64_t year, month, day;
  if (!ReadDigits(text, pos, 4, &year) || *pos >= text.size() || text[(*pos)++] != '-' ||
      !ReadDigits(text, pos, 2, &month) || *pos >= text.size() || text[(*pos)++] != '-' ||
      !ReadDigits(text, pos, 2, &day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, static_cast<unsigned>(month))) return false;
  *days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return true;
}

}  // namespace

bool ParseDateText(std::string_view text, int32_t* days) {
  size_t pos = 0;
  int64_t value;
  if (!ParseDateAt(text, &pos, &value) || pos != text.size()) return false;
  *days = static_cast<int32_t>(value);
  return true;
}

bool ParseTimestampText(std::string_view text, int64_t* micros) {
  size_t pos = 0;
  int64_t days;
  if (!ParseDateAt(text, &pos, &days)) return false;
  int64_t hour = 0, minute = 0, second = 0, fraction = 0;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == 't' || text[pos] == ' ')) {
    ++pos;
    if (!ReadDigits(text, &pos, 2, &hour) || pos >= text.size() || text[pos++] != ':' ||
        !ReadDigits(text, &pos, 2, &minute)) {
      return false;
    }
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!ReadDigits(text, &pos, 2, &second)) return false;
      if (pos < text.size() && text[pos] == '.') {
        ++pos;
        int digits = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
          if (digits < 6) fraction = fraction * 10 + (text[pos] - '0');
          ++digits;
          ++pos;
        }
        if (digits == 0) return false;
        for (; digits < 6; ++digits) fraction *= 10;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return false;
  }
  int64_t offset_seconds = 0;
  if (pos < text.size()) {
    char sign = text[pos++];
    if (sign == 'Z' || sign == 'z') {
      if (pos != text.size()) return false;
    } else if (sign == '+' || sign == '-') {
      int64_t offset_hours, offset_minutes = 0;
      if (!ReadDigits(text, &pos, 2, &offset_hours)) return false;
      if (pos < text.size() && text[pos] == ':') ++pos;
      if (pos < text.size() && !ReadDigits(text, &pos, 2, &offset_minutes)) return false;
      if (pos != text.size() || offset_hours > 23 || offset_minutes > 59) return false;
      offset_seconds = (offset_hours * 3600 + offset_minutes * 60) * (sign == '-' ? -1 : 1);
    } else {
      return false;
    }
  }
  int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  *micros = seconds * kMicrosPerSecond + fraction;
  return true;
}

}  // namespace sluice::formats
