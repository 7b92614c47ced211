// abs, round, floor, ceil, sqrt, pow. round is HALF_UP as Spark's. Non-ANSI, abs of the minimum
// integer wraps to itself as in Java, and results beyond their integral type wrap (round) or
// saturate (floor, ceil of a double); ANSI raises ARITHMETIC_OVERFLOW for each.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/decimal.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

// out[i] = f(in[i]) for T in, R out; validity copied from the input.
template <typename T, typename R, typename F>
Datum UnaryLoop(const BoundNode& node, const Datum& in, int64_t rows, F f) {
  auto out = NewFixedColumn(node.type, rows);
  R* values = reinterpret_cast<R*>(out->data.data());
  FixedReader<T> r = ReadFixed<T>(in);
  for (int64_t i = 0; i < rows; ++i) values[i] = f(r[i]);
  SetValidity(out.get(), CombinedValidity({in}, rows));
  return Datum{out, false};
}

// round() rounds HALF_UP, bround() HALF_EVEN: the quotient of a by b so rounded.
int128_t DivideRounded(int128_t a, int128_t b, bool half_even) {
  return half_even ? DivideRoundHalfEven(a, b) : DivideRoundHalfUp(a, b);
}

// x rounded to a multiple of 10^-scale (scale < 0; any other scale leaves it), as an int128
// (which cannot overflow here).
int128_t RoundedIntegral(int64_t x, int32_t scale, bool half_even) {
  if (scale >= 0) return x;
  if (-scale > 18) return 0;
  const int128_t factor = Pow10(-scale);
  return DivideRounded(x, factor, half_even) * factor;
}

// Non-ANSI: the rounded value wraps into T.
template <typename T>
T RoundIntegral(T v, int32_t scale, bool half_even) {
  return static_cast<T>(static_cast<uint64_t>(RoundedIntegral(static_cast<int64_t>(v), scale, half_even)));
}

// Rounds the shortest decimal text of the double, as Spark rounds through BigDecimal.
double RoundDouble(double v, int32_t scale, bool half_even) {
  if (!std::isfinite(v) || scale > 30) return v;
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string_view text(buf, static_cast<size_t>(end - buf));  // "-1.2345e+02"
  // The scale the text is exact at: its fraction digits less the exponent.
  const size_t e = text.find('e');
  const size_t dot = text.find('.');
  const int fraction = dot == std::string_view::npos ? 0 : static_cast<int>(e - dot - 1);
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), text.data() + text.size(), exponent);
  const int exact = std::max(fraction - exponent, 0);
  const int kept = std::max(scale, 0);
  if (exact <= scale) return v;
  // Digits beyond the 38th cannot tip a rounding at scale 30 or less.
  const int parsed = std::min(exact, 38);
  std::optional<int128_t> dec = ParseDecimal(text, 38, parsed);
  if (!dec) return v;  // beyond 38 digits a double has no fractional part left to round
  *dec = DivideRounded(*dec, Pow10(parsed - kept), half_even);
  if (scale < 0) {
    const int128_t f = Pow10(std::min(-scale, 38));
    *dec = DivideRounded(*dec, f, half_even) * f;
  }
  std::string rounded = DecimalText(*dec, kept);
  double out = 0;
  std::from_chars(rounded.data(), rounded.data() + rounded.size(), out);
  return out;
}

// Whether rounding `v` to `scale` leaves T's range.
template <typename T>
bool RoundIntegralOverflows(T v, int32_t scale, bool half_even) {
  const int128_t rounded = RoundedIntegral(static_cast<int64_t>(v), scale, half_even);
  return rounded < std::numeric_limits<T>::min() || rounded > std::numeric_limits<T>::max();
}

// ANSI mode: ARITHMETIC_OVERFLOW for the first valid row of the input for which `overflows` holds.
template <typename T, typename F>
Status CheckOverflow(const BoundNode& node, const Datum& in, int64_t rows, F overflows) {
  if (node.mode != EvalMode::kAnsi) return Status::OK();
  FixedReader<T> r = ReadFixed<T>(in);
  ValidityReader valid = ReadValidity(in);
  for (int64_t i = 0; i < rows; ++i) {
    if (valid(i) && overflows(r[i])) {
      return AnsiError(errors::kArithmeticOverflow, node,
                       fmt::format("{} overflow from {}", node.type->ToString(),
                                   FormatValue(*in.column, in.scalar ? 0 : i + in.offset)),
                       "a wider type or try_cast");
    }
  }
  return Status::OK();
}

Status CheckMathOverflow(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Datum& a = args[0];
  TypeId id = a.column->type->id();
  if (id == TypeId::kDecimal) return Status::OK();
  switch (node.op) {
    case Op::kAbs:
      return DispatchFixed(id, [&](auto zero) -> Status {
        using T = decltype(zero);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, int128_t>) {
          return CheckOverflow<T>(node, a, rows, [](T x) { return x == std::numeric_limits<T>::min(); });
        }
        return Status::OK();
      });
    case Op::kFloor:
    case Op::kCeil: {
      const bool floor = node.op == Op::kFloor;
      return DispatchFixed(id, [&](auto zero) -> Status {
        using T = decltype(zero);
        if constexpr (std::is_floating_point_v<T>) {
          return CheckOverflow<T>(node, a, rows, [floor](T x) {
            // NaN becomes 0 in both modes; only values beyond a bigint overflow.
            double d = floor ? std::floor(static_cast<double>(x)) : std::ceil(static_cast<double>(x));
            return !std::isnan(d) && !(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18);
          });
        }
        return Status::OK();
      });
    }
    case Op::kRound: {
      const int32_t scale = args[1].column->Value<int32_t>(0);
      const bool half_even = node.name == "bround";
      return DispatchFixed(id, [&](auto zero) -> Status {
        using T = decltype(zero);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, int128_t>) {
          return CheckOverflow<T>(node, a, rows, [scale, half_even](T x) { return RoundIntegralOverflows<T>(x, scale, half_even); });
        }
        return Status::OK();
      });
    }
    default: return Status::OK();
  }
}

Result<Datum> Compute(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);

// The functions of one double: each a name and how it maps a value (NaN for no real value, as
// Java's Math; the logarithms give NULL for arguments at or below their domain, as Spark's).
struct UnaryMath {
  std::string_view name;
  double (*apply)(double);
  double null_at_or_below;  // NaN: NULL for no argument
};
double Signum(double x) { return std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }
// Java's Math.toDegrees and toRadians multiply by these constants.
double Degrees(double x) { return x * 57.29577951308232; }
double Radians(double x) { return x * 0.017453292519943295; }
double Log(double x) { return std::log(x); }
// glibc's cbrt can be an ulp off where Java's is exact (cbrt(27) is 3): one Newton step settles it.
double Cbrt(double x) {
  double r = std::cbrt(x);
  if (std::isfinite(r) && r != 0) r -= (r * r * r - x) / (3 * r * r);
  return r;
}
constexpr double kNoNull = std::numeric_limits<double>::quiet_NaN();
const UnaryMath kUnaryMath[] = {
    {"exp", [](double x) { return std::exp(x); }, kNoNull},     {"expm1", [](double x) { return std::expm1(x); }, kNoNull},
    {"ln", Log, 0.0},                                           {"log10", [](double x) { return std::log10(x); }, 0.0},
    {"log2", [](double x) { return std::log2(x); }, 0.0},         {"log1p", [](double x) { return std::log1p(x); }, -1.0},
    {"cbrt", Cbrt, kNoNull},   {"sin", [](double x) { return std::sin(x); }, kNoNull},
    {"cos", [](double x) { return std::cos(x); }, kNoNull},     {"tan", [](double x) { return std::tan(x); }, kNoNull},
    {"asin", [](double x) { return std::asin(x); }, kNoNull},   {"acos", [](double x) { return std::acos(x); }, kNoNull},
    {"atan", [](double x) { return std::atan(x); }, kNoNull},   {"sinh", [](double x) { return std::sinh(x); }, kNoNull},
    {"cosh", [](double x) { return std::cosh(x); }, kNoNull},   {"tanh", [](double x) { return std::tanh(x); }, kNoNull},
    {"degrees", Degrees, kNoNull},                              {"radians", Radians, kNoNull},
    {"sign", Signum, kNoNull},                                  {"signum", Signum, kNoNull},
    // As Spark computes them: reciprocals of Java's functions; atanh from logarithms.
    {"cot", [](double x) { return 1 / std::tan(x); }, kNoNull},  {"sec", [](double x) { return 1 / std::cos(x); }, kNoNull},
    {"csc", [](double x) { return 1 / std::sin(x); }, kNoNull},  {"asinh", [](double x) { return std::asinh(x); }, kNoNull},
    {"acosh", [](double x) { return std::acosh(x); }, kNoNull},
    {"atanh", [](double x) { return 0.5 * (std::log1p(x) - std::log1p(-x)); }, kNoNull},
    {"rint", [](double x) { return std::nearbyint(x); }, kNoNull},
};

}  // namespace


Result<Datum> EvalMathFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  SLUICE_RETURN_IF_ERROR(CheckMathOverflow(node, args, rows));
  return Compute(node, args, rows);
}

namespace {

Result<Datum> Compute(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Datum& a = args[0];
  TypeId id = a.column->type->id();
  switch (node.op) {
    case Op::kSqrt: return UnaryLoop<double, double>(node, a, rows, [](double x) { return std::sqrt(x); });
    case Op::kWidthBucket: {
      // Spark's width_bucket: bucket 0 below the range, buckets + 1 above it; a range given high
      // to low counts down; NULL for no buckets, an empty range or a value that is not a number.
      FixedReader<double> value = ReadFixed<double>(args[0]), low = ReadFixed<double>(args[1]), high = ReadFixed<double>(args[2]);
      FixedReader<int64_t> buckets = ReadFixed<int64_t>(args[3]);
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        const double v = value[i], min = low[i], max = high[i];
        const int64_t n = buckets[i];
        if (n <= 0 || n == INT64_MAX || std::isnan(v) || min == max || !std::isfinite(min) || !std::isfinite(max)) return false;
        if (min < max) {
          *out = v < min ? 0 : v >= max ? n + 1 : static_cast<int64_t>((v - min) / (max - min) * static_cast<double>(n)) + 1;
        } else {
          *out = v > min ? 0 : v <= max ? n + 1 : static_cast<int64_t>((min - v) / (min - max) * static_cast<double>(n)) + 1;
        }
        return true;
      });
    }
    case Op::kFactorial: {
      FixedReader<int32_t> n = ReadFixed<int32_t>(a);
      return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
        if (n[i] < 0 || n[i] > 20) return false;
        int64_t product = 1;
        for (int32_t k = 2; k <= n[i]; ++k) product *= k;
        *out = product;
        return true;
      });
    }
    case Op::kMathUnary: {
      const UnaryMath* f = nullptr;
      for (const UnaryMath& candidate : kUnaryMath) {
        if (candidate.name == node.name) f = &candidate;
      }
      if (f == nullptr) return Status::Error(errors::kInternalError, "no such math function: " + node.name);
      auto out = NewFixedColumn(node.type, rows);
      double* values = reinterpret_cast<double*>(out->data.data());
      FixedReader<double> in = ReadFixed<double>(a);
      std::vector<uint8_t> validity = CombinedValidity({a}, rows);
      for (int64_t i = 0; i < rows; ++i) {
        values[i] = f->apply(in[i]);
        if (!(in[i] <= f->null_at_or_below)) continue;  // NaN stays NaN
        if (validity.empty()) validity.assign(static_cast<size_t>(rows), 1);
        validity[static_cast<size_t>(i)] = 0;
      }
      SetValidity(out.get(), std::move(validity));
      return Datum{out, false};
    }
    case Op::kLog: {  // log(base, x): NULL for a base or x at or below 0, as Spark's
      auto out = NewFixedColumn(node.type, rows);
      double* values = reinterpret_cast<double*>(out->data.data());
      FixedReader<double> base = ReadFixed<double>(a), x = ReadFixed<double>(args[1]);
      std::vector<uint8_t> validity = CombinedValidity(args, rows);
      for (int64_t i = 0; i < rows; ++i) {
        values[i] = std::log(x[i]) / std::log(base[i]);
        if (base[i] > 0 && x[i] > 0) continue;
        if (validity.empty()) validity.assign(static_cast<size_t>(rows), 1);
        validity[static_cast<size_t>(i)] = 0;
      }
      SetValidity(out.get(), std::move(validity));
      return Datum{out, false};
    }
    case Op::kPow: {
      auto out = NewFixedColumn(node.type, rows);
      double* values = reinterpret_cast<double*>(out->data.data());
      FixedReader<double> x = ReadFixed<double>(a), y = ReadFixed<double>(args[1]);
      for (int64_t i = 0; i < rows; ++i) values[i] = std::pow(x[i], y[i]);
      SetValidity(out.get(), CombinedValidity(args, rows));
      return Datum{out, false};
    }
    case Op::kAbs:
      return DispatchFixed(id, [&](auto zero) {
        using T = decltype(zero);
        return UnaryLoop<T, T>(node, a, rows, [](T x) -> T {
          if constexpr (std::is_floating_point_v<T>) {
            return std::fabs(x);
          } else if constexpr (std::is_same_v<T, int128_t>) {
            return x < 0 ? -x : x;
          } else {
            using U = std::make_unsigned_t<T>;
            return x < 0 ? static_cast<T>(static_cast<U>(0) - static_cast<U>(x)) : x;
          }
        });
      });
    case Op::kFloor:
    case Op::kCeil: {
      bool floor = node.op == Op::kFloor;
      if (id == TypeId::kDecimal) {
        int128_t factor = Pow10(a.column->type->scale());
        return UnaryLoop<int128_t, int128_t>(node, a, rows, [=](int128_t x) {
          int128_t q = x / factor, r = x % factor;
          if (floor && r < 0) --q;
          if (!floor && r > 0) ++q;
          return q;
        });
      }
      if (id == TypeId::kFloat || id == TypeId::kDouble) {
        return DispatchFixed(id, [&](auto zero) {
          using T = decltype(zero);
          return UnaryLoop<T, int64_t>(node, a, rows, [=](T x) {
            double d = floor ? std::floor(static_cast<double>(x)) : std::ceil(static_cast<double>(x));
            if (std::isnan(d)) return int64_t{0};
            if (d >= 9.2233720368547758e18) return INT64_MAX;
            if (d <= -9.2233720368547758e18) return INT64_MIN;
            return static_cast<int64_t>(d);
          });
        });
      }
      return DispatchFixed(id, [&](auto zero) {
        using T = decltype(zero);
        return UnaryLoop<T, int64_t>(node, a, rows, [](T x) { return static_cast<int64_t>(x); });
      });
    }
    case Op::kRound: {
      int32_t scale = args[1].column->Value<int32_t>(0);
      const bool half_even = node.name == "bround";
      if (id == TypeId::kDecimal) {
        int from = a.column->type->scale(), to = node.type->scale();
        int precision = node.type->precision();
        auto out = NewFixedColumn(node.type, rows);
        int128_t* values = reinterpret_cast<int128_t*>(out->data.data());
        FixedReader<int128_t> r = ReadFixed<int128_t>(a);
        std::vector<uint8_t> validity = CombinedValidity({a}, rows);
        for (int64_t i = 0; i < rows; ++i) {
          int128_t x = r[i];
          if (scale < 0) {
            // Round to tens, hundreds...: to scale `scale` in one rounding, then back to scale 0.
            const int drop = from - scale;
            const int128_t f = Pow10(std::min(-scale, 38));
            values[i] = drop > 38 ? 0 : DivideRounded(x, Pow10(drop), half_even) * f;
          } else {
            values[i] = to < from ? DivideRounded(x, Pow10(from - to), half_even) : Rescale(x, from, to).value_or(0);
          }
          if (!FitsPrecision(values[i], precision)) {
            if (validity.empty()) validity.assign(static_cast<size_t>(rows), 1);
            validity[static_cast<size_t>(i)] = 0;
          }
        }
        SetValidity(out.get(), std::move(validity));
        return Datum{out, false};
      }
      return DispatchFixed(id, [&](auto zero) {
        using T = decltype(zero);
        return UnaryLoop<T, T>(node, a, rows, [=](T x) -> T {
          if constexpr (std::is_floating_point_v<T>) {
            return static_cast<T>(RoundDouble(static_cast<double>(x), scale, half_even));
          } else if constexpr (std::is_same_v<T, int128_t>) {
            return x;
          } else {
            return RoundIntegral<T>(x, scale, half_even);
          }
        });
      });
    }
    default: return Status::Error(errors::kInternalError, "not a math function");
  }
}

}  // namespace

}  // namespace sluice::expr
