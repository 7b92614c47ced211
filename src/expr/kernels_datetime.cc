// Date and time functions. The session time zone is UTC.
#include <fmt/format.h>

#include "sluice/core/civil_date.h"
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

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Truncates a timestamp to a unit; nullopt for an unknown unit.
std::optional<int64_t> Truncate(std::string_view unit_text, int64_t micros) {
  std::string unit = Upper(unit_text);
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  CivilDate c = CivilFromDays(days);
  auto floor_to = [&](int64_t step) { return FloorDiv(micros, step) * step; };
  if (unit == "YEAR" || unit == "YYYY" || unit == "YY") return DaysFromCivil(c.year, 1, 1) * kMicrosPerDay;
  if (unit == "QUARTER") return DaysFromCivil(c.year, (c.month - 1) / 3 * 3 + 1, 1) * kMicrosPerDay;
  if (unit == "MONTH" || unit == "MM" || unit == "MON") return DaysFromCivil(c.year, c.month, 1) * kMicrosPerDay;
  if (unit == "WEEK") {
    int64_t weekday = ((days % 7) + 7 + 3) % 7;  // 0 = Monday (1970-01-01 was a Thursday)
    return (days - weekday) * kMicrosPerDay;
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
      const int64_t sunday_based = days + 4 - FloorDiv(days + 4, 7) * 7;  // 1970-01-01 was a Thursday (4)
      return sunday_based + 1;
    }
    case Op::kDayOfYear: return days - DaysFromCivil(c.year, 1, 1) + 1;
    default: {
      // The ISO week is the week of its Thursday, counted from the first Thursday of that year.
      const int64_t monday_based = days + 3 - FloorDiv(days + 3, 7) * 7;  // 0 is Monday
      const int64_t thursday = days - monday_based + 3;
      const CivilDate t = CivilFromDays(thursday);
      return (thursday - DaysFromCivil(t.year, 1, 1)) / 7 + 1;
    }
  }
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
    case Op::kTimestampFromUnits: {
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
