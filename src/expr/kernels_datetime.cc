// Date and time functions. The session time zone is UTC.
#include <cmath>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/civil_date.h"
#include "sluice/core/compute.h"
#include "sluice/core/decimal.h"
#include "sluice/core/error_classes.h"
#include "expr/datetime.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

constexpr std::string_view kDefaultFormat = "yyyy-MM-dd HH:mm:ss";

// ParseWithPattern; text the pattern does not match is CANNOT_PARSE_TIMESTAMP in ANSI mode.
Result<std::optional<int64_t>> ParseOrFail(const BoundNode& node, std::string_view text, std::string_view pattern) {
  std::optional<int64_t> micros = ParseWithPattern(text, pattern);
  if (!micros && node.mode == EvalMode::kAnsi) {
    return AnsiError(errors::kCannotParseTimestamp, node,
                     fmt::format("the text '{}' does not match the pattern '{}'", text, pattern), "try_to_timestamp");
  }
  return micros;
}

// The day of the week of a day number: 0 is Monday ... 6 is Sunday (1970-01-01 was a Thursday).
int64_t WeekdayFromMonday(int64_t days) { return days + 3 - FloorDiv(days + 3, 7) * 7; }

// Truncates a timestamp to a unit; nullopt for an unknown unit.
std::optional<int64_t> Truncate(std::string_view unit_text, int64_t micros) {
  std::string unit = AsciiUpper(unit_text);
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  CivilDate c = CivilFromDays(days);
  auto floor_to = [&](int64_t step) { return FloorDiv(micros, step) * step; };
  if (unit == "YEAR" || unit == "YYYY" || unit == "YY") return DaysFromCivil(c.year, 1, 1) * kMicrosPerDay;
  if (unit == "QUARTER") return DaysFromCivil(c.year, (c.month - 1) / 3 * 3 + 1, 1) * kMicrosPerDay;
  if (unit == "MONTH" || unit == "MM" || unit == "MON") return DaysFromCivil(c.year, c.month, 1) * kMicrosPerDay;
  if (unit == "WEEK") {
    return (days - WeekdayFromMonday(days)) * kMicrosPerDay;
  }
  if (unit == "DAY" || unit == "DD") return days * kMicrosPerDay;
  if (unit == "HOUR") return floor_to(3600 * kMicrosPerSecond);
  if (unit == "MINUTE") return floor_to(60 * kMicrosPerSecond);
  if (unit == "SECOND") return floor_to(kMicrosPerSecond);
  if (unit == "MILLISECOND") return floor_to(1000);
  if (unit == "MICROSECOND") return micros;
  return std::nullopt;
}

// year, month, day, quarter, dayofweek (1 is Sunday), dayofyear, weekofyear (ISO 8601) of a date.
int64_t DatePart(Op op, int64_t days) {
  CivilDate c = CivilFromDays(days);
  switch (op) {
    case Op::kYear: return c.year;
    case Op::kMonth: return c.month;
    case Op::kDay: return c.day;
    case Op::kQuarter: return (c.month - 1) / 3 + 1;
    case Op::kDayOfWeek: {
      return (WeekdayFromMonday(days) + 1) % 7 + 1;  // 1 is Sunday
    }
    case Op::kDayOfYear: return days - DaysFromCivil(c.year, 1, 1) + 1;
    default: {
      // The ISO week is the week of its Thursday, counted from the first Thursday of that year.
      const int64_t thursday = days - WeekdayFromMonday(days) + 3;
      const CivilDate t = CivilFromDays(thursday);
      return (thursday - DaysFromCivil(t.year, 1, 1)) / 7 + 1;
    }
  }
}

// The micros of one unit of timestampadd and timestampdiff below a month; 0 for the month units.
int64_t MicrosOfUnit(std::string_view unit) {
  if (unit == "MICROSECOND") return 1;
  if (unit == "MILLISECOND") return 1000;
  if (unit == "SECOND") return kMicrosPerSecond;
  if (unit == "MINUTE") return 60 * kMicrosPerSecond;
  if (unit == "HOUR") return 3600 * kMicrosPerSecond;
  if (unit == "DAY" || unit == "DAYOFYEAR") return kMicrosPerDay;
  if (unit == "WEEK") return 7 * kMicrosPerDay;
  return 0;
}
int64_t MonthsOfUnit(std::string_view unit) { return unit == "YEAR" ? 12 : unit == "QUARTER" ? 3 : 1; }

// Whole months from `start` to `end` as Java's ChronoUnit.MONTHS.between counts them: a month
// counts once the day and time of `start` are reached again.
int64_t WholeMonthsBetween(int64_t start, int64_t end) {
  const int64_t start_day = FloorDiv(start, kMicrosPerDay), end_day = FloorDiv(end, kMicrosPerDay);
  const CivilDate a = CivilFromDays(start_day), b = CivilFromDays(end_day);
  int64_t months = (b.year * 12 + b.month) - (a.year * 12 + a.month);
  // The day of month and time of day, compared as one number.
  const int64_t a_rest = a.day * kMicrosPerDay + (start - start_day * kMicrosPerDay);
  const int64_t b_rest = b.day * kMicrosPerDay + (end - end_day * kMicrosPerDay);
  if (months > 0 && b_rest < a_rest) --months;
  if (months < 0 && b_rest > a_rest) ++months;
  return months;
}

// A day of the week as next_day reads it ("MO", "MON", "MONDAY", any case): 0 is Monday; -1 for
// anything else.
int DayOfWeekFromText(std::string_view text) {
  static constexpr std::string_view kDays[] = {"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"};
  const std::string upper = AsciiUpper(text);
  for (int d = 0; d < 7; ++d) {
    if (upper == kDays[d] || upper == kDays[d].substr(0, 2) || upper == kDays[d].substr(0, 3)) return d;
  }
  return -1;
}

Status BadPattern(std::string_view pattern) {
  return Status::Error(errors::kInvalidParameterValue,
                       fmt::format("the datetime pattern '{}' uses a letter that is not supported (y M d H h m s S a E)", pattern));
}

}  // namespace

Result<Datum> EvalDatetimeFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, int64_t now_micros) {
  switch (node.op) {
    case Op::kCurrentTimestamp:
      return FixedKernel<int64_t>(node, args, 1, [&](int64_t, int64_t* out) -> Result<bool> {
        *out = now_micros;
        return true;
      });
    case Op::kCurrentDate:
      return FixedKernel<int32_t>(node, args, 1, [&](int64_t, int32_t* out) -> Result<bool> {
        *out = static_cast<int32_t>(FloorDiv(now_micros, kMicrosPerDay));
        return true;
      });
    case Op::kYear:
    case Op::kMonth:
    case Op::kDay:
    case Op::kQuarter:
    case Op::kDayOfWeek:
    case Op::kDayOfYear:
    case Op::kWeekOfYear: {
      FixedReader<int32_t> days = ReadFixed<int32_t>(args[0]);
      Op op = node.op;
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        *out = static_cast<int32_t>(DatePart(op, days[i]));
        return true;
      });
    }
    case Op::kHour:
    case Op::kMinute:
    case Op::kSecond: {
      FixedReader<int64_t> ts = ReadFixed<int64_t>(args[0]);
      const int64_t unit = node.op == Op::kHour ? 3600 * kMicrosPerSecond : node.op == Op::kMinute ? 60 * kMicrosPerSecond : kMicrosPerSecond;
      const int64_t range = node.op == Op::kHour ? 24 : 60;
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        *out = static_cast<int32_t>(FloorDiv(ts[i], unit) - FloorDiv(FloorDiv(ts[i], unit), range) * range);
        return true;
      });
    }
    case Op::kTimeWindow: {
      // start = ts - (ts - offset) mod duration, the modulo taken toward the past.
      const auto& window = static_cast<const TimeWindow&>(*node.state);
      if (window.slide != window.duration) {
        return Status::Error(errors::kNotImplemented,
                             "a sliding window (a slide shorter than the window) puts a row in several windows: "
                             "it can only be a GROUP BY key");
      }
      FixedReader<int64_t> ts = ReadFixed<int64_t>(args[0]);
      ValidityReader valid = ReadValidity(args[0]);
      const TypePtr& time_type = node.type->field(0).type;
      auto starts = NewFixedColumn(time_type, rows);
      auto ends = NewFixedColumn(time_type, rows);
      int64_t* start = reinterpret_cast<int64_t*>(starts->data.data());
      int64_t* end = reinterpret_cast<int64_t*>(ends->data.data());
      std::vector<uint8_t> validity(static_cast<size_t>(rows), 1);
      bool any_null = false;
      for (int64_t i = 0; i < rows; ++i) {
        if (!valid(i)) {
          validity[static_cast<size_t>(i)] = 0;
          any_null = true;
          continue;
        }
        const int64_t into = (ts[i] - window.start) % window.duration;
        start[i] = ts[i] - (into < 0 ? into + window.duration : into);
        end[i] = start[i] + window.duration;
      }
      auto out = std::make_shared<Column>();
      out->type = node.type;
      out->length = rows;
      out->children = {starts, ends};
      if (any_null) SetValidity(out.get(), std::move(validity));
      return Datum{out, false};
    }
    case Op::kWindowTime: {
      // The window's last microsecond.
      ColumnPtr window = Materialize(args[0], rows);
      const Column& ends = *window->children[1];
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        if (ends.IsNull(i)) return false;
        *out = ends.Value<int64_t>(i) - 1;
        return true;
      });
    }
    case Op::kTimestampFromUnits: {
      const TypeId from = args[0].column->type->id();
      if (from == TypeId::kDouble) {
        // Spark's (seconds * 1e6).toLong: saturating, NULL for NaN and the infinities.
        FixedReader<double> seconds = ReadFixed<double>(args[0]);
        return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
          if (!std::isfinite(seconds[i])) return false;
          const double micros = seconds[i] * static_cast<double>(kMicrosPerSecond);
          *out = micros >= 9.223372036854775807e18    ? INT64_MAX
                 : micros <= -9.223372036854775808e18 ? INT64_MIN
                                                      : static_cast<int64_t>(micros);
          return true;
        });
      }
      if (from == TypeId::kDecimal) {
        // Exact, as Spark's longValueExact: digits below a microsecond or beyond the range fail.
        FixedReader<int128_t> seconds = ReadFixed<int128_t>(args[0]);
        const int scale = args[0].column->type->scale();
        return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
          int128_t micros = seconds[i];
          if (scale > 6) {
            const int128_t unit = Pow10(scale - 6);
            if (micros % unit != 0) {
              return Status::Error(errors::kArithmeticOverflow,
                                   fmt::format("{}({}) has digits below a microsecond", node.name,
                                               DecimalText(seconds[i], scale)));
            }
            micros /= unit;
          } else {
            micros *= Pow10(6 - scale);
          }
          if (micros > INT64_MAX || micros < INT64_MIN) {
            return Status::Error(errors::kArithmeticOverflow, fmt::format("{}({}) is beyond the timestamps' range",
                                                                          node.name, DecimalText(seconds[i], scale)));
          }
          *out = static_cast<int64_t>(micros);
          return true;
        });
      }
      FixedReader<int64_t> n = ReadFixed<int64_t>(args[0]);
      const int64_t scale = node.name == "timestamp_seconds" ? kMicrosPerSecond
                            : node.name == "timestamp_millis" ? 1000 : 1;
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        if (__builtin_mul_overflow(n[i], scale, out)) {
          // Spark multiplies exactly in either mode.
          return Status::Error(errors::kArithmeticOverflow,
                               fmt::format("{}({}) is beyond the timestamps' range", node.name, n[i]));
        }
        return true;
      });
    }
    case Op::kUnixUnits: {
      FixedReader<int64_t> ts = ReadFixed<int64_t>(args[0]);
      const int64_t scale = node.name == "unix_seconds" ? kMicrosPerSecond : node.name == "unix_millis" ? 1000 : 1;
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        *out = FloorDiv(ts[i], scale);
        return true;
      });
    }
    case Op::kUnixDate:
    case Op::kDateFromUnixDate: {
      // A date is its day number since 1970-01-01 already.
      FixedReader<int32_t> days = ReadFixed<int32_t>(args[0]);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        *out = days[i];
        return true;
      });
    }
    case Op::kDateDiff: {
      FixedReader<int32_t> end = ReadFixed<int32_t>(args[0]), start = ReadFixed<int32_t>(args[1]);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        *out = static_cast<int32_t>(static_cast<int64_t>(end[i]) - start[i]);
        return true;
      });
    }
    case Op::kAddMonths: {
      FixedReader<int32_t> days = ReadFixed<int32_t>(args[0]), months = ReadFixed<int32_t>(args[1]);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        *out = static_cast<int32_t>(AddMonths(days[i], months[i]));
        return true;
      });
    }
    case Op::kLastDay: {
      FixedReader<int32_t> days = ReadFixed<int32_t>(args[0]);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        CivilDate c = CivilFromDays(days[i]);
        *out = static_cast<int32_t>(DaysFromCivil(c.year, c.month, DaysInMonth(c.year, c.month)));
        return true;
      });
    }
    case Op::kMakeDate: {
      FixedReader<int32_t> year = ReadFixed<int32_t>(args[0]), month = ReadFixed<int32_t>(args[1]),
                           day = ReadFixed<int32_t>(args[2]);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        const bool valid = year[i] >= 1 && year[i] <= 9999 && month[i] >= 1 && month[i] <= 12 && day[i] >= 1 &&
                           day[i] <= DaysInMonth(year[i], month[i]);
        if (!valid && node.mode == EvalMode::kAnsi) {
          return AnsiError(errors::kDatetimeFieldOutOfBounds, node,
                           fmt::format("the date {}-{}-{} does not exist", year[i], month[i], day[i]), "a CASE over the fields");
        }
        if (valid) *out = static_cast<int32_t>(DaysFromCivil(year[i], month[i], day[i]));
        return valid;
      });
    }
    case Op::kMonthsBetween: {
      // As Spark: whole months when the days of month match (or both are last days), else the
      // difference of days and times over a 31-day month, rounded to 8 digits unless asked not to.
      FixedReader<int64_t> end = ReadFixed<int64_t>(args[0]), start = ReadFixed<int64_t>(args[1]);
      const bool round_off = args[2].column->Value<uint8_t>(0) != 0;
      return FixedKernel<double>(node, args, rows, [&](int64_t i, double* out) -> Result<bool> {
        const int64_t d1 = FloorDiv(end[i], kMicrosPerDay), d2 = FloorDiv(start[i], kMicrosPerDay);
        const CivilDate a = CivilFromDays(d1), b = CivilFromDays(d2);
        const double months = static_cast<double>((a.year * 12 + a.month) - (b.year * 12 + b.month));
        const bool last1 = a.day == DaysInMonth(a.year, static_cast<int>(a.month));
        const bool last2 = b.day == DaysInMonth(b.year, static_cast<int>(b.month));
        if (a.day == b.day || (last1 && last2)) {
          *out = months;
          return true;
        }
        const int64_t micros = (a.day - b.day) * kMicrosPerDay + (end[i] - d1 * kMicrosPerDay) - (start[i] - d2 * kMicrosPerDay);
        const double diff = months + static_cast<double>(micros) / static_cast<double>(31 * kMicrosPerDay);
        *out = round_off ? static_cast<double>(std::llround(diff * 1e8)) / 1e8 : diff;
        return true;
      });
    }
    case Op::kNextDay: {
      FixedReader<int32_t> day = ReadFixed<int32_t>(args[0]);
      StringReader name = ReadString(args[1]);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        const int wanted = DayOfWeekFromText(name[i]);
        if (wanted < 0) {
          if (node.mode != EvalMode::kAnsi) return false;
          return Status::Error(errors::kIllegalDayOfWeek, fmt::format("Illegal input for day of week: {}", name[i]));
        }
        int64_t ahead = (wanted - WeekdayFromMonday(day[i]) + 7) % 7;
        if (ahead == 0) ahead = 7;
        *out = static_cast<int32_t>(day[i] + ahead);
        return true;
      });
    }
    case Op::kMakeTimestamp: {
      FixedReader<int32_t> year = ReadFixed<int32_t>(args[0]), month = ReadFixed<int32_t>(args[1]),
                           day = ReadFixed<int32_t>(args[2]), hour = ReadFixed<int32_t>(args[3]),
                           minute = ReadFixed<int32_t>(args[4]);
      FixedReader<int128_t> seconds = ReadFixed<int128_t>(args[5]);  // decimal(16,6): micros
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        const int128_t micros = seconds[i];
        // 60 seconds (with no fraction) is the next minute, as Spark allows it.
        const bool valid = year[i] >= 1 && year[i] <= 9999 && month[i] >= 1 && month[i] <= 12 && day[i] >= 1 &&
                           day[i] <= DaysInMonth(year[i], month[i]) && hour[i] >= 0 && hour[i] <= 23 &&
                           minute[i] >= 0 && minute[i] <= 59 && micros >= 0 &&
                           (micros < 60 * kMicrosPerSecond || micros == 60 * kMicrosPerSecond);
        if (!valid) {
          if (node.mode != EvalMode::kAnsi) return false;
          return AnsiError(errors::kDatetimeFieldOutOfBounds, node,
                           fmt::format("the time {}-{}-{} {}:{}:{} does not exist", year[i], month[i], day[i], hour[i],
                                       minute[i], DecimalText(micros, 6)),
                           "a CASE over the fields");
        }
        *out = DaysFromCivil(year[i], month[i], day[i]) * kMicrosPerDay + (hour[i] * 3600LL + minute[i] * 60LL) * kMicrosPerSecond +
               static_cast<int64_t>(micros);
        return true;
      });
    }
    case Op::kSecondWithFraction: {
      FixedReader<int64_t> ts = ReadFixed<int64_t>(args[0]);
      return FixedKernel<int128_t>(node, args, rows, [&](int64_t i, int128_t* out) -> Result<bool> {
        *out = ts[i] - FloorDiv(ts[i], 60 * kMicrosPerSecond) * 60 * kMicrosPerSecond;  // micros of the minute
        return true;
      });
    }
    case Op::kTimestampAddUnits: {
      FixedReader<int64_t> quantity = ReadFixed<int64_t>(args[0]), ts = ReadFixed<int64_t>(args[1]);
      const int64_t unit_micros = MicrosOfUnit(node.name);
      const int64_t unit_months = MonthsOfUnit(node.name);
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        int64_t result = 0;
        bool overflow = false;
        if (unit_micros > 0) {
          int64_t step = 0;
          overflow = __builtin_mul_overflow(quantity[i], unit_micros, &step) || __builtin_add_overflow(ts[i], step, &result);
        } else {
          int64_t months = 0;
          overflow = __builtin_mul_overflow(quantity[i], unit_months, &months) || months > INT32_MAX || months < INT32_MIN;
          if (!overflow) {
            const int64_t day = FloorDiv(ts[i], kMicrosPerDay);
            result = AddMonths(day, static_cast<int32_t>(months)) * kMicrosPerDay + (ts[i] - day * kMicrosPerDay);
          }
        }
        if (overflow) {
          return Status::Error(errors::kArithmeticOverflow,
                               fmt::format("timestampadd({}, {}, ...) leaves the range of timestamps", node.name, quantity[i]));
        }
        *out = result;
        return true;
      });
    }
    case Op::kTimestampDiffUnits: {
      FixedReader<int64_t> start = ReadFixed<int64_t>(args[0]), end = ReadFixed<int64_t>(args[1]);
      const int64_t unit_micros = MicrosOfUnit(node.name);
      const int64_t unit_months = MonthsOfUnit(node.name);
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        if (unit_micros > 0) {
          *out = static_cast<int64_t>((static_cast<__int128>(end[i]) - start[i]) / unit_micros);  // toward zero
        } else {
          *out = WholeMonthsBetween(start[i], end[i]) / unit_months;
        }
        return true;
      });
    }
    case Op::kToTimestamp:
    case Op::kToDate: {
      StringReader text = ReadString(args[0]), pattern = ReadString(args[1]);
      bool date = node.op == Op::kToDate;
      if (date) {
        return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
          SLUICE_ASSIGN_OR_RETURN(auto v, ParseOrFail(node, text[i], pattern[i]));
          if (v) *out = static_cast<int32_t>(FloorDiv(*v, kMicrosPerDay));
          return v.has_value();
        });
      }
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseOrFail(node, text[i], pattern[i]));
        if (v) *out = *v;
        return v.has_value();
      });
    }
    case Op::kDateTrunc: {
      StringReader unit = ReadString(args[0]);
      FixedReader<int64_t> ts = ReadFixed<int64_t>(args[1]);
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        auto v = Truncate(unit[i], ts[i]);
        if (v) *out = *v;
        return v.has_value();
      });
    }
    case Op::kUnixTimestamp: {
      if (args.empty()) {
        return FixedKernel<int64_t>(node, args, 1, [&](int64_t, int64_t* out) -> Result<bool> {
          *out = FloorDiv(now_micros, kMicrosPerSecond);
          return true;
        });
      }
      if (args.size() == 1) {
        FixedReader<int64_t> ts = ReadFixed<int64_t>(args[0]);
        return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
          *out = FloorDiv(ts[i], kMicrosPerSecond);
          return true;
        });
      }
      StringReader text = ReadString(args[0]), pattern = ReadString(args[1]);
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseOrFail(node, text[i], pattern[i]));
        if (v) *out = FloorDiv(*v, kMicrosPerSecond);
        return v.has_value();
      });
    }
    case Op::kDateFormat:
    case Op::kFromUnixtime: {
      bool from_unix = node.op == Op::kFromUnixtime;
      FixedReader<int64_t> values = ReadFixed<int64_t>(args[0]);
      bool has_pattern = args.size() > 1;
      StringReader pattern = has_pattern ? ReadString(args[1]) : StringReader{nullptr, nullptr, 0};
      StringWriter writer(node.type, rows);
      std::vector<ValidityReader> valid;
      for (const Datum& d : args) valid.push_back(ReadValidity(d));
      for (int64_t i = 0; i < rows; ++i) {
        bool ok = true;
        for (const ValidityReader& v : valid) ok = ok && v(i);
        if (!ok) {
          writer.AppendNull();
          continue;
        }
        int64_t micros = values[i];
        if (from_unix && __builtin_mul_overflow(values[i], kMicrosPerSecond, &micros)) {
          writer.AppendNull();
          continue;
        }
        std::string_view p = has_pattern ? pattern[i] : kDefaultFormat;
        auto text = FormatWithPattern(micros, p);
        if (!text) return BadPattern(p);
        writer.Append(*text);
      }
      return Datum{writer.Finish(), false};
    }
    default: return Status::Error(errors::kInternalError, "not a datetime function");
  }
}

}  // namespace sluice::expr
