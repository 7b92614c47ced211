#include "sluice/core/iso_datetime.h"

#include "sluice/core/civil_date.h"

namespace sluice {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;
// Days whose midnight, give or take a day of offset, still fits int64 microseconds.
constexpr int64_t kMaxTimestampDays = INT64_MAX / kMicrosPerDay - 1;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Exactly `count` digits at `*pos`, advancing past them.
bool ReadDigits(std::string_view text, size_t* pos, int count, int64_t* value) {
  if (text.size() - *pos < static_cast<size_t>(count)) return false;
  int64_t result = 0;
  for (int i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (!IsDigit(c)) return false;
    result = result * 10 + (c - '0');
  }
  *pos += count;
  *value = result;
  return true;
}

bool ReadDate(std::string_view text, size_t* pos, int64_t* days) {
  size_t i = *pos;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  const size_t year_start = i;
  int64_t year = 0;
  while (i < text.size() && IsDigit(text[i]) && i - year_start < 6) year = year * 10 + (text[i++] - '0');
  if (i - year_start < 4) return false;
  if (negative) year = -year;
  int64_t month = 0, day = 0;
  if (i >= text.size() || text[i++] != '-' || !ReadDigits(text, &i, 2, &month)) return false;
  if (i >= text.size() || text[i++] != '-' || !ReadDigits(text, &i, 2, &day)) return false;
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, static_cast<int>(month))) return false;
  *days = DaysFromCivil(year, month, day);
  *pos = i;
  return true;
}

// hh:mm[:ss[.fraction]] as microseconds of the day.
bool ReadTime(std::string_view text, size_t* pos, int64_t* micros) {
  int64_t hour = 0, minute = 0, second = 0, fraction = 0;
  size_t i = *pos;
  if (!ReadDigits(text, &i, 2, &hour) || i >= text.size() || text[i++] != ':' || !ReadDigits(text, &i, 2, &minute)) {
    return false;
  }
  if (i < text.size() && text[i] == ':') {
    ++i;
    if (!ReadDigits(text, &i, 2, &second)) return false;
    if (i < text.size() && text[i] == '.') {
      ++i;
      int digits = 0;
      while (i < text.size() && IsDigit(text[i])) {
        if (digits < 6) fraction = fraction * 10 + (text[i] - '0');
        ++digits;
        ++i;
      }
      if (digits == 0) return false;
      for (; digits < 6; ++digits) fraction *= 10;
    }
  }
  if (hour > 23 || minute > 59 || second > 59) return false;
  *micros = ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction;
  *pos = i;
  return true;
}

// Z or ±hh[[:]mm] up to the end of the text, as seconds east of UTC.
bool ReadZone(std::string_view text, size_t pos, int64_t* offset_seconds) {
  const char sign = text[pos++];
  if (sign == 'Z' || sign == 'z') {
    *offset_seconds = 0;
    return pos == text.size();
  }
  if (sign != '+' && sign != '-') return false;
  int64_t hours = 0, minutes = 0;
  if (!ReadDigits(text, &pos, 2, &hours)) return false;
  if (pos < text.size() && text[pos] == ':') ++pos;
  if (pos < text.size() && !ReadDigits(text, &pos, 2, &minutes)) return false;
  if (pos != text.size() || hours > 18 || minutes > 59 || (hours == 18 && minutes > 0)) return false;
  *offset_seconds = (hours * 3600 + minutes * 60) * (sign == '-' ? -1 : 1);
  return true;
}

}  // namespace

bool ParseIsoDate(std::string_view text, int32_t* days) {
  size_t pos = 0;
  int64_t value = 0;
  if (!ReadDate(text, &pos, &value) || pos != text.size()) return false;
  *days = static_cast<int32_t>(value);  // six-digit years stay far inside int32 days
  return true;
}

bool ParseIsoTimestamp(std::string_view text, int64_t* micros, bool* has_zone) {
  size_t pos = 0;
  int64_t days = 0;
  if (!ReadDate(text, &pos, &days) || days > kMaxTimestampDays || days < -kMaxTimestampDays) return false;
  int64_t of_day = 0;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == 't' || text[pos] == ' ')) {
    ++pos;
    if (!ReadTime(text, &pos, &of_day)) return false;
  }
  int64_t offset_seconds = 0;
  const bool zoned = pos < text.size();
  if (zoned && !ReadZone(text, pos, &offset_seconds)) return false;
  if (has_zone != nullptr) *has_zone = zoned;
  *micros = days * kMicrosPerDay + of_day - offset_seconds * kMicrosPerSecond;
  return true;
}

}  // namespace sluice
