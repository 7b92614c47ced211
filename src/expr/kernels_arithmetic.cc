// + - * / % div, unary minus and date + days, in Spark's evaluation modes. Non-ANSI: integer
// overflow wraps as in Java, division or remainder by zero is null, decimal results that do not
// fit their type are null. ANSI raises each of these (ARITHMETIC_OVERFLOW, DIVIDE_BY_ZERO,
// REMAINDER_BY_ZERO, NUMERIC_VALUE_OUT_OF_RANGE); TRY makes each null, integer overflow included.
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

#include "sluice/core/decimal.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

template <typename T>
T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T WrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

// A kernel's result and the first row whose inputs were all valid but whose value could not be
// computed (-1 when none): what ANSI mode raises.
struct Computed {
  Datum datum;
  int64_t failed_row = -1;
};

// Runs `f(a, b, &out) -> bool computed` over every row of two inputs of type T into output type
// R; a row not computed is null.
template <typename T, typename R, typename F>
Computed BinaryLoop(const BoundNode& node, const Datum& a, const Datum& b, int64_t rows, F f) {
  auto out = NewFixedColumn(node.type, rows);
  R* values = reinterpret_cast<R*>(out->data.data());
  std::vector<uint8_t> validity = CombinedValidity({a, b}, rows);
  FixedReader<T> ra = ReadFixed<T>(a), rb = ReadFixed<T>(b);
  bool extra_nulls = false;
  std::vector<uint8_t> ok(static_cast<size_t>(rows), 1);
  for (int64_t i = 0; i < rows; ++i) {
    bool valid = f(ra[i], rb[i], &values[i]);
    ok[static_cast<size_t>(i)] = valid;
    extra_nulls |= !valid;
  }
  int64_t failed_row = -1;
  if (extra_nulls) {
    if (validity.empty()) validity.assign(static_cast<size_t>(rows), 1);
    for (int64_t i = 0; i < rows; ++i) {
      uint8_t& v = validity[static_cast<size_t>(i)];
      if (v != 0 && ok[static_cast<size_t>(i)] == 0 && failed_row < 0) failed_row = i;
      v &= ok[static_cast<size_t>(i)];
    }
  }
  SetValidity(out.get(), std::move(validity));
  return {Datum{out, false}, failed_row};
}

// The same with no possible new nulls, written so that the compiler can vectorize it.
template <typename T, typename F>
Computed SimpleLoop(const BoundNode& node, const Datum& a, const Datum& b, int64_t rows, F f) {
  auto out = NewFixedColumn(node.type, rows);
  T* values = reinterpret_cast<T*>(out->data.data());
  if (!a.scalar && b.scalar) {
    const T* x = ValuesOf<T>(a);
    const T y = b.column->values<T>()[0];
    for (int64_t i = 0; i < rows; ++i) values[i] = f(x[i], y);
  } else if (!a.scalar && !b.scalar) {
    const T* x = ValuesOf<T>(a);
    const T* y = ValuesOf<T>(b);
    for (int64_t i = 0; i < rows; ++i) values[i] = f(x[i], y[i]);
  } else {
    FixedReader<T> ra = ReadFixed<T>(a), rb = ReadFixed<T>(b);
    for (int64_t i = 0; i < rows; ++i) values[i] = f(ra[i], rb[i]);
  }
  SetValidity(out.get(), CombinedValidity({a, b}, rows));
  return {Datum{out, false}};
}

// ANSI integer + - *: `overflows(a, b, &out)` computes a row and says whether it overflowed. The
// loop only gathers whether any row did; the first such row with valid inputs is looked for only
// then, so rows without overflow cost about what the wrapping loop does.
template <typename T, typename F>
Computed OverflowCheckedLoop(const BoundNode& node, const Datum& a, const Datum& b, int64_t rows, F overflows) {
  auto out = NewFixedColumn(node.type, rows);
  T* values = reinterpret_cast<T*>(out->data.data());
  FixedReader<T> ra = ReadFixed<T>(a), rb = ReadFixed<T>(b);
  bool any = false;
  if (!a.scalar && b.scalar) {  // column op constant, the common shape, in a loop the compiler unrolls
    const T* x = ValuesOf<T>(a);
    const T y = b.column->values<T>()[0];
    for (int64_t i = 0; i < rows; ++i) any |= overflows(x[i], y, &values[i]);
  } else {
    for (int64_t i = 0; i < rows; ++i) any |= overflows(ra[i], rb[i], &values[i]);
  }
  std::vector<uint8_t> validity = CombinedValidity({a, b}, rows);
  int64_t failed_row = -1;
  for (int64_t i = 0; any && i < rows && failed_row < 0; ++i) {
    T ignored;
    if ((validity.empty() || validity[static_cast<size_t>(i)] != 0) && overflows(ra[i], rb[i], &ignored)) failed_row = i;
  }
  SetValidity(out.get(), std::move(validity));
  return {Datum{out, false}, failed_row};
}

template <typename T>
Computed NumericOp(const BoundNode& node, const Datum& a, const Datum& b, int64_t rows) {
  constexpr bool kIntegral = std::is_integral_v<T>;
  // Strict modes check integer overflow, which non-ANSI Spark lets wrap: ANSI fails at the first
  // overflowing row, TRY makes each one null.
  const bool checked = kIntegral && node.mode != EvalMode::kLegacy;
  const bool fails = node.mode == EvalMode::kAnsi;
  auto add = [](auto x, auto y, auto* out) { return __builtin_add_overflow(x, y, out); };
  auto subtract = [](auto x, auto y, auto* out) { return __builtin_sub_overflow(x, y, out); };
  auto multiply = [](auto x, auto y, auto* out) { return __builtin_mul_overflow(x, y, out); };
  auto checked_loop = [&](auto overflows) {
    if (fails) return OverflowCheckedLoop<T>(node, a, b, rows, overflows);
    return BinaryLoop<T, T>(node, a, b, rows, [&](T x, T y, T* out) { return !overflows(x, y, out); });
  };
  switch (node.op) {
    case Op::kAdd:
      if constexpr (kIntegral) {
        if (checked) return checked_loop(add);
        return SimpleLoop<T>(node, a, b, rows, [](T x, T y) { return WrapAdd(x, y); });
      } else {
        return SimpleLoop<T>(node, a, b, rows, [](T x, T y) { return x + y; });
      }
    case Op::kSubtract:
      if constexpr (kIntegral) {
        if (checked) return checked_loop(subtract);
        return SimpleLoop<T>(node, a, b, rows, [](T x, T y) { return WrapSub(x, y); });
      } else {
        return SimpleLoop<T>(node, a, b, rows, [](T x, T y) { return x - y; });
      }
    case Op::kMultiply:
      if constexpr (kIntegral) {
        if (checked) return checked_loop(multiply);
        return SimpleLoop<T>(node, a, b, rows, [](T x, T y) { return WrapMul(x, y); });
      } else {
        return SimpleLoop<T>(node, a, b, rows, [](T x, T y) { return x * y; });
      }
    case Op::kDivide:
      return BinaryLoop<T, T>(node, a, b, rows, [](T x, T y, T* out) {
        if (y == 0) return false;
        *out = static_cast<T>(x / y);
        return true;
      });
    case Op::kIntDivide:
      return BinaryLoop<T, int64_t>(node, a, b, rows, [checked](T x, T y, int64_t* out) {
        if (y == 0) return false;
        if constexpr (kIntegral) {
          if (checked && y == -1 && static_cast<int64_t>(x) == INT64_MIN) return false;
          *out = (y == -1) ? static_cast<int64_t>(WrapSub<int64_t>(0, static_cast<int64_t>(x))) : static_cast<int64_t>(x / y);
        } else {
          *out = static_cast<int64_t>(x / y);
        }
        return true;
      });
    default: {  // remainder: the sign of the dividend, as Java; pmod adds the divisor to a negative one
      const bool positive = node.op == Op::kPmod;
      return BinaryLoop<T, T>(node, a, b, rows, [positive](T x, T y, T* out) {
        if (y == 0) return false;
        if constexpr (kIntegral) {
          *out = y == -1 ? T{0} : static_cast<T>(x % y);
          if (positive && *out < 0) *out = static_cast<T>((*out + y) % y);
        } else {
          *out = static_cast<T>(std::fmod(x, y));
          if (positive && *out < 0) *out = static_cast<T>(std::fmod(*out + y, y));
        }
        return true;
      });
    }
  }
}

Computed DecimalOp(const BoundNode& node, const Datum& a, const Datum& b, int64_t rows) {
  int s1 = a.column->type->scale(), s2 = b.column->type->scale();
  int p = node.type->precision(), s = node.type->scale();
  int aligned = std::max(s1, s2);
  int128_t f1 = Pow10(aligned - s1), f2 = Pow10(aligned - s2);
  auto fit = [p](std::optional<int128_t> v, int128_t* out) {
    if (!v || !FitsPrecision(*v, p)) return false;
    *out = *v;
    return true;
  };
  switch (node.op) {
    case Op::kAdd:
    case Op::kSubtract: {
      bool subtract = node.op == Op::kSubtract;
      return BinaryLoop<int128_t, int128_t>(node, a, b, rows, [=](int128_t x, int128_t y, int128_t* out) {
        int128_t xs, ys, r;
        if (__builtin_mul_overflow(x, f1, &xs) || __builtin_mul_overflow(y, f2, &ys)) return false;
        if (subtract ? __builtin_sub_overflow(xs, ys, &r) : __builtin_add_overflow(xs, ys, &r)) return false;
        return fit(Rescale(r, aligned, s), out);
      });
    }
    case Op::kMultiply:
      return BinaryLoop<int128_t, int128_t>(node, a, b, rows, [=](int128_t x, int128_t y, int128_t* out) {
        int128_t r;
        if (__builtin_mul_overflow(x, y, &r)) return false;
        return fit(Rescale(r, s1 + s2, s), out);
      });
    case Op::kDivide:
      return BinaryLoop<int128_t, int128_t>(node, a, b, rows, [=](int128_t x, int128_t y, int128_t* out) {
        if (y == 0) return false;
        // x / y at scale s: (x * 10^(s - s1 + s2)) / y.
        int shift = s - s1 + s2;
        int128_t numerator = x, denominator = y;
        if (shift >= 0) {
          if (shift > 38 || __builtin_mul_overflow(x, Pow10(shift), &numerator)) return false;
        } else {
          if (-shift > 38 || __builtin_mul_overflow(y, Pow10(-shift), &denominator)) return false;
        }
        return fit(DivideRoundHalfUp(numerator, denominator), out);
      });
    case Op::kIntDivide:
      return BinaryLoop<int128_t, int64_t>(node, a, b, rows, [=](int128_t x, int128_t y, int64_t* out) {
        if (y == 0) return false;
        int128_t xs, ys;
        if (__builtin_mul_overflow(x, f1, &xs) || __builtin_mul_overflow(y, f2, &ys)) return false;
        *out = static_cast<int64_t>(xs / ys);
        return true;
      });
    default: {  // remainder, pmod
      const bool positive = node.op == Op::kPmod;
      return BinaryLoop<int128_t, int128_t>(node, a, b, rows, [=](int128_t x, int128_t y, int128_t* out) {
        if (y == 0) return false;
        int128_t xs, ys;
        if (__builtin_mul_overflow(x, f1, &xs) || __builtin_mul_overflow(y, f2, &ys)) return false;
        int128_t r = xs % ys;
        if (positive && r < 0) r = (r + ys) % ys;
        return fit(Rescale(r, aligned, s), out);
      });
    }
  }
}

Computed Negate(const BoundNode& node, const Datum& a, int64_t rows) {
  auto out = NewFixedColumn(node.type, rows);
  std::vector<uint8_t> validity = CombinedValidity({a}, rows);
  int64_t failed_row = -1;
  DispatchFixed(node.type->id(), [&](auto zero) {
    using T = decltype(zero);
    T* values = reinterpret_cast<T*>(out->data.data());
    FixedReader<T> in = ReadFixed<T>(a);
    for (int64_t i = 0; i < rows; ++i) {
      if constexpr (std::is_same_v<T, int128_t> || std::is_floating_point_v<T>) {
        values[i] = -in[i];
      } else {
        values[i] = WrapSub<T>(T{0}, in[i]);
      }
    }
    // Only the minimum of an integral type has no negation; strict modes refuse it.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, int128_t>) {
      if (node.mode != EvalMode::kLegacy) {
        for (int64_t i = 0; i < rows; ++i) {
          if (in[i] != std::numeric_limits<T>::min() || (!validity.empty() && validity[static_cast<size_t>(i)] == 0)) continue;
          if (validity.empty()) validity.assign(static_cast<size_t>(rows), 1);
          validity[static_cast<size_t>(i)] = 0;
          if (failed_row < 0) failed_row = i;
        }
      }
    }
    return 0;
  });
  SetValidity(out.get(), std::move(validity));
  return {Datum{out, false}, failed_row};
}

Computed Compute(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  if (node.op == Op::kNegate) return Negate(node, args[0], rows);
  if (node.op == Op::kDateAddDays) {
    return SimpleLoop<int32_t>(node, args[0], args[1], rows, [](int32_t d, int32_t n) { return WrapAdd(d, n); });
  }
  TypeId operand = args[0].column->type->id();
  if (operand == TypeId::kDecimal) return DecimalOp(node, args[0], args[1], rows);
  switch (operand) {
    case TypeId::kByte: return NumericOp<int8_t>(node, args[0], args[1], rows);
    case TypeId::kShort: return NumericOp<int16_t>(node, args[0], args[1], rows);
    case TypeId::kInteger: return NumericOp<int32_t>(node, args[0], args[1], rows);
    case TypeId::kLong: return NumericOp<int64_t>(node, args[0], args[1], rows);
    case TypeId::kFloat: return NumericOp<float>(node, args[0], args[1], rows);
    default: return NumericOp<double>(node, args[0], args[1], rows);
  }
}

// Row `row` of a datum as a column row.
int64_t RowOf(const Datum& d, int64_t row) { return d.scalar ? 0 : row + d.offset; }

bool IsZero(const Datum& d, int64_t row) {
  const Column& c = *d.column;
  return DispatchFixed(c.type->id(), [&](auto zero) { return c.Value<decltype(zero)>(RowOf(d, row)) == decltype(zero){0}; });
}

// The ANSI error for the row an op could not compute.
Status Failure(const BoundNode& node, const std::vector<Datum>& args, int64_t row) {
  std::string values;
  for (size_t i = 0; i < args.size(); ++i) {
    values += (i > 0 ? " and " : "") + FormatValue(*args[i].column, RowOf(args[i], row));
  }
  const bool by_zero = args.size() == 2 && IsZero(args[1], row) &&
                       (node.op == Op::kDivide || node.op == Op::kIntDivide || node.op == Op::kRemainder ||
                        node.op == Op::kPmod);
  if (by_zero) {
    const std::string what = "division by zero of " + FormatValue(*args[0].column, RowOf(args[0], row));
    if (node.op == Op::kRemainder || node.op == Op::kPmod) return AnsiError(errors::kRemainderByZero, node, what, "try_mod");
    return AnsiError(errors::kDivideByZero, node, what, "try_divide");
  }
  std::string_view try_function = node.op == Op::kAdd        ? "try_add"
                                  : node.op == Op::kSubtract ? "try_subtract"
                                  : node.op == Op::kMultiply ? "try_multiply"
                                  : node.op == Op::kNegate   ? "try_subtract(0, x)"
                                                             : "try_divide";
  if (node.type->id() == TypeId::kDecimal) {
    return AnsiError(errors::kNumericValueOutOfRange, node,
                     fmt::format("a result out of the range of {} from {}", node.type->ToString(), values), try_function);
  }
  return AnsiError(errors::kArithmeticOverflow, node, fmt::format("{} overflow from {}", node.type->ToString(), values),
                   try_function);
}

}  // namespace

Result<Datum> EvalArithmetic(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  Computed computed = Compute(node, args, rows);
  if (computed.failed_row >= 0 && node.mode == EvalMode::kAnsi) return Failure(node, args, computed.failed_row);
  return std::move(computed.datum);
}

}  // namespace sluice::expr
