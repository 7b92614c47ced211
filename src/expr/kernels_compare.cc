// Comparisons, three-valued logic, IN, and the "pick one argument per row" family (CASE,
// coalesce, greatest, least).
#include <cmath>
#include <string_view>
#include <type_traits>

#include "sluice/core/compute.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

// Spark's ordering: NaN equals NaN and is above every other value; -0.0 equals 0.0.
template <typename T>
bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
  } else {
    return a < b;
  }
}
template <typename T>
bool Equal(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

template <typename T>
bool Apply(Op op, T a, T b) {
  switch (op) {
    case Op::kEq: case Op::kNullSafeEq: return Equal(a, b);
    case Op::kNe: return !Equal(a, b);
    case Op::kLt: return Less(a, b);
    case Op::kLe: return !Less(b, a);
    case Op::kGt: return Less(b, a);
    default: return !Less(a, b);  // kGe
  }
}

// Compares with the operator fixed at compile time so that the loop vectorizes; the common
// column-versus-constant shape gets its own loop.
template <Op kOp, typename Reader, typename Value>
void CompareLoop(const Reader& a, const Reader& b, bool a_scalar, bool b_scalar, uint8_t* out, int64_t rows) {
  if (!a_scalar && b_scalar) {
    const Value y = b[0];
    for (int64_t i = 0; i < rows; ++i) out[i] = Apply<Value>(kOp, a[i], y);
  } else {
    for (int64_t i = 0; i < rows; ++i) out[i] = Apply<Value>(kOp, a[i], b[i]);
  }
}

template <typename Reader, typename Value>
void CompareDispatch(Op op, const Reader& a, const Reader& b, bool as, bool bs, uint8_t* out, int64_t rows) {
  switch (op) {
    case Op::kEq: case Op::kNullSafeEq: return CompareLoop<Op::kEq, Reader, Value>(a, b, as, bs, out, rows);
    case Op::kNe: return CompareLoop<Op::kNe, Reader, Value>(a, b, as, bs, out, rows);
    case Op::kLt: return CompareLoop<Op::kLt, Reader, Value>(a, b, as, bs, out, rows);
    case Op::kLe: return CompareLoop<Op::kLe, Reader, Value>(a, b, as, bs, out, rows);
    case Op::kGt: return CompareLoop<Op::kGt, Reader, Value>(a, b, as, bs, out, rows);
    default: return CompareLoop<Op::kGe, Reader, Value>(a, b, as, bs, out, rows);
  }
}

// A reader over a plain array for the vectorizable numeric paths.
template <typename T>
struct ArrayReader {
  const T* values;
  T operator[](int64_t i) const { return values[i]; }
};

template <typename T>
void CompareFixed(Op op, const Datum& a, const Datum& b, uint8_t* out, int64_t rows) {
  if (!a.scalar) {
    ArrayReader<T> ra{ValuesOf<T>(a)}, rb{ValuesOf<T>(b)};
    return CompareDispatch<ArrayReader<T>, T>(op, ra, rb, false, b.scalar, out, rows);
  }
  FixedReader<T> ra = ReadFixed<T>(a), rb = ReadFixed<T>(b);
  CompareDispatch<FixedReader<T>, T>(op, ra, rb, false, false, out, rows);
}

// String equality against a constant: compare lengths first, bytes only when they agree.
void StringEqualsConstant(const Datum& a, std::string_view y, bool negate, uint8_t* out, int64_t rows) {
  const char* data = reinterpret_cast<const char*>(a.column->data.data());
  const int64_t* offsets = a.column->offsets.data() + a.offset;
  const int64_t n = static_cast<int64_t>(y.size());
  for (int64_t i = 0; i < rows; ++i) {
    int64_t begin = offsets[i], len = offsets[i + 1] - begin;
    bool eq = len == n && (n == 0 || std::memcmp(data + begin, y.data(), static_cast<size_t>(n)) == 0);
    out[i] = static_cast<uint8_t>(eq != negate);
  }
}

void CompareDatums(Op op, const Datum& a, const Datum& b, uint8_t* out, int64_t rows) {
  TypeId id = a.column->type->id();
  if (id == TypeId::kString || id == TypeId::kBinary) {
    if ((op == Op::kEq || op == Op::kNullSafeEq || op == Op::kNe) && !a.scalar && b.scalar) {
      return StringEqualsConstant(a, ReadString(b)[0], op == Op::kNe, out, rows);
    }
    StringReader ra = ReadString(a), rb = ReadString(b);
    return CompareDispatch<StringReader, std::string_view>(op, ra, rb, false, false, out, rows);
  }
  DispatchFixed(id, [&](auto zero) {
    CompareFixed<decltype(zero)>(op, a, b, out, rows);
    return 0;
  });
}

Datum BooleanResult(const TypePtr& type, int64_t rows, std::shared_ptr<Column>* out) {
  *out = NewFixedColumn(type, rows);
  return Datum{*out, false};
}

}  // namespace

bool RowsEqual(const Column& a, int64_t ra, const Column& b, int64_t rb) {
  return CompareRows(a, ra, b, rb) == 0;
}

int CompareRows(const Column& a, int64_t ra, const Column& b, int64_t rb) {
  TypeId id = a.type->id();
  if (id == TypeId::kString || id == TypeId::kBinary) {
    int c = a.View(ra).compare(b.View(rb));
    return c < 0 ? -1 : c > 0;
  }
  return DispatchFixed(id, [&](auto zero) {
    using T = decltype(zero);
    T x = a.Value<T>(ra), y = b.Value<T>(rb);
    return Less(x, y) ? -1 : Less(y, x) ? 1 : 0;
  });
}

Datum EvalComparison(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Datum& a = args[0];
  const Datum& b = args[1];
  std::shared_ptr<Column> out;
  Datum result = BooleanResult(node.type, rows, &out);
  uint8_t* values = out->data.data();
  // A constant on the left is swapped to the right, where the fast loops expect it.
  if (a.scalar && !b.scalar) {
    Op mirrored = node.op == Op::kLt ? Op::kGt : node.op == Op::kGt ? Op::kLt : node.op == Op::kLe ? Op::kGe
                : node.op == Op::kGe ? Op::kLe : node.op;
    CompareDatums(mirrored, b, a, values, rows);
  } else {
    CompareDatums(node.op, a, b, values, rows);
  }
  if (node.op == Op::kNullSafeEq) {
    ValidityReader va = ReadValidity(a), vb = ReadValidity(b);
    if (va.valid != nullptr || vb.valid != nullptr) {
      for (int64_t i = 0; i < rows; ++i) {
        bool x = va(i), y = vb(i);
        values[i] = (x && y) ? values[i] : static_cast<uint8_t>(!x && !y);
      }
    }
    return result;
  }
  SetValidity(out.get(), CombinedValidity(args, rows));
  return result;
}

Datum EvalLogic(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  std::shared_ptr<Column> out;
  Datum result = BooleanResult(node.type, rows, &out);
  uint8_t* values = out->data.data();
  const Datum& a = args[0];
  FixedReader<uint8_t> ra = ReadFixed<uint8_t>(a);
  ValidityReader va = ReadValidity(a);
  switch (node.op) {
    case Op::kIsNull:
    case Op::kIsNotNull: {
      uint8_t want_valid = node.op == Op::kIsNotNull;
      for (int64_t i = 0; i < rows; ++i) values[i] = static_cast<uint8_t>(va(i) == want_valid);
      return result;
    }
    case Op::kIsTrue:
    case Op::kIsFalse: {
      uint8_t target = node.op == Op::kIsTrue;
      for (int64_t i = 0; i < rows; ++i) {
        bool hit = va(i) && ra[i] == target;
        values[i] = static_cast<uint8_t>(hit != node.negated);
      }
      return result;
    }
    case Op::kNot:
      for (int64_t i = 0; i < rows; ++i) values[i] = ra[i] ^ 1;
      SetValidity(out.get(), CombinedValidity(args, rows));
      return result;
    default: break;
  }
  // AND / OR with Kleene logic: FALSE AND NULL is FALSE, TRUE OR NULL is TRUE.
  const Datum& b = args[1];
  FixedReader<uint8_t> rb = ReadFixed<uint8_t>(b);
  ValidityReader vb = ReadValidity(b);
  bool is_and = node.op == Op::kAnd;
  if (va.valid == nullptr && vb.valid == nullptr) {
    if (!a.scalar && !b.scalar) {
      const uint8_t* x = ValuesOf<uint8_t>(a);
      const uint8_t* y = ValuesOf<uint8_t>(b);
      if (is_and) {
        for (int64_t i = 0; i < rows; ++i) values[i] = x[i] & y[i];
      } else {
        for (int64_t i = 0; i < rows; ++i) values[i] = x[i] | y[i];
      }
    } else {
      for (int64_t i = 0; i < rows; ++i) values[i] = is_and ? (ra[i] & rb[i]) : (ra[i] | rb[i]);
    }
    return result;
  }
  std::vector<uint8_t> validity(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    uint8_t ma = va(i), mb = vb(i);
    uint8_t at = ma & ra[i], bt = mb & rb[i];
    uint8_t af = ma & (ra[i] ^ 1), bf = mb & (rb[i] ^ 1);
    uint8_t t = is_and ? (at & bt) : (at | bt);
    uint8_t f = is_and ? (af | bf) : (af & bf);
    values[i] = t;
    validity[static_cast<size_t>(i)] = t | f;
  }
  SetValidity(out.get(), std::move(validity));
  return result;
}

Datum EvalIn(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  std::shared_ptr<Column> out;
  Datum result = BooleanResult(node.type, rows, &out);
  uint8_t* found = out->data.data();
  std::vector<uint8_t> hits(static_cast<size_t>(rows));
  std::vector<uint8_t> saw_null(static_cast<size_t>(rows), 0);
  const Datum& x = args[0];
  for (size_t c = 1; c < args.size(); ++c) {
    const Datum& candidate = args[c];
    if (IsAllNull(candidate)) {
      std::fill(saw_null.begin(), saw_null.end(), 1);
      continue;
    }
    if (x.scalar && !candidate.scalar) {
      CompareDatums(Op::kEq, candidate, x, hits.data(), rows);
    } else {
      CompareDatums(Op::kEq, x, candidate, hits.data(), rows);
    }
    ValidityReader vc = ReadValidity(candidate);
    for (int64_t i = 0; i < rows; ++i) {
      bool valid = vc(i);
      found[i] |= hits[static_cast<size_t>(i)] & static_cast<uint8_t>(valid);
      saw_null[static_cast<size_t>(i)] |= static_cast<uint8_t>(!valid);
    }
  }
  // x IN (...) is TRUE on a match; otherwise NULL if x or any candidate is NULL; else FALSE.
  ValidityReader vx = ReadValidity(x);
  std::vector<uint8_t> validity(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    bool valid = vx(i) && (found[i] || !saw_null[static_cast<size_t>(i)]);
    validity[static_cast<size_t>(i)] = valid;
    found[i] = static_cast<uint8_t>((found[i] != 0) != node.negated) & static_cast<uint8_t>(valid);
  }
  SetValidity(out.get(), std::move(validity));
  return result;
}

namespace {

// Row i of the result is row i of args[choice[i]]; choice -1 is null.
Result<Datum> Gather(const TypePtr& type, const std::vector<Datum>& args, const std::vector<int32_t>& choice, int64_t rows) {
  TypeId id = type->id();
  if (id == TypeId::kString || id == TypeId::kBinary) {
    StringWriter writer(type, rows);
    std::vector<StringReader> readers;
    std::vector<ValidityReader> valid;
    for (const Datum& d : args) readers.push_back(ReadString(d)), valid.push_back(ReadValidity(d));
    for (int64_t i = 0; i < rows; ++i) {
      int32_t c = choice[static_cast<size_t>(i)];
      if (c < 0 || !valid[static_cast<size_t>(c)](i)) {
        writer.AppendNull();
      } else {
        writer.Append(readers[static_cast<size_t>(c)][i]);
      }
    }
    return Datum{writer.Finish(), false};
  }
  if (type->is_nested()) {
    // Nested values: concatenate the candidates and take the chosen rows.
    std::vector<ColumnPtr> columns;
    for (const Datum& d : args) columns.push_back(Materialize(d, rows));
    columns.push_back(MakeNullColumn(type, 1));
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr all, Concatenate(columns));
    std::vector<int64_t> indices(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
      int32_t c = choice[static_cast<size_t>(i)];
      indices[static_cast<size_t>(i)] = c < 0 ? static_cast<int64_t>(args.size()) * rows : c * rows + i;
    }
    return Datum{Take(all, indices), false};
  }
  auto out = NewFixedColumn(type, rows);
  std::vector<uint8_t> validity(static_cast<size_t>(rows), 1);
  DispatchFixed(id, [&](auto zero) {
    using T = decltype(zero);
    T* values = reinterpret_cast<T*>(out->data.data());
    std::vector<FixedReader<T>> readers;
    std::vector<ValidityReader> valid;
    for (const Datum& d : args) readers.push_back(ReadFixed<T>(d)), valid.push_back(ReadValidity(d));
    for (int64_t i = 0; i < rows; ++i) {
      int32_t c = choice[static_cast<size_t>(i)];
      if (c < 0 || !valid[static_cast<size_t>(c)](i)) {
        validity[static_cast<size_t>(i)] = 0;
      } else {
        values[i] = readers[static_cast<size_t>(c)][i];
      }
    }
    return 0;
  });
  SetValidity(out.get(), std::move(validity));
  return Datum{out, false};
}

}  // namespace

Result<Datum> EvalChoice(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  std::vector<int32_t> choice(static_cast<size_t>(rows), -1);
  switch (node.op) {
    case Op::kCase: {
      // args: (when, then)*, else. Each row takes the first branch whose condition is TRUE.
      size_t branches = (args.size() - 1) / 2;
      std::vector<Datum> values;
      for (size_t b = 0; b < branches; ++b) values.push_back(args[2 * b + 1]);
      values.push_back(args.back());
      std::fill(choice.begin(), choice.end(), static_cast<int32_t>(branches));
      for (size_t b = branches; b-- > 0;) {
        const Datum& when = args[2 * b];
        FixedReader<uint8_t> value = ReadFixed<uint8_t>(when);
        ValidityReader valid = ReadValidity(when);
        for (int64_t i = 0; i < rows; ++i) {
          if (valid(i) && value[i]) choice[static_cast<size_t>(i)] = static_cast<int32_t>(b);
        }
      }
      return Gather(node.type, values, choice, rows);
    }
    case Op::kCoalesce: {
      for (size_t a = args.size(); a-- > 0;) {
        ValidityReader valid = ReadValidity(args[a]);
        for (int64_t i = 0; i < rows; ++i) {
          if (valid(i)) choice[static_cast<size_t>(i)] = static_cast<int32_t>(a);
        }
      }
      return Gather(node.type, args, choice, rows);
    }
    default: {
      // greatest / least skip nulls; null only when every argument is null.
      bool greatest = node.op == Op::kGreatest;
      std::vector<ColumnPtr> columns;
      for (const Datum& d : args) columns.push_back(d.column);
      for (size_t a = 0; a < args.size(); ++a) {
        ValidityReader valid = ReadValidity(args[a]);
        int64_t mask = args[a].scalar ? 0 : ~int64_t{0};
        for (int64_t i = 0; i < rows; ++i) {
          if (!valid(i)) continue;
          int32_t& best = choice[static_cast<size_t>(i)];
          if (best < 0) {
            best = static_cast<int32_t>(a);
            continue;
          }
          const Datum& current = args[static_cast<size_t>(best)];
          int64_t best_mask = current.scalar ? 0 : ~int64_t{0};
          int c = CompareRows(*columns[a], (i & mask) + args[a].offset, *columns[static_cast<size_t>(best)],
                              (i & best_mask) + current.offset);
          if (greatest ? c > 0 : c < 0) best = static_cast<int32_t>(a);
        }
      }
      return Gather(node.type, args, choice, rows);
    }
  }
}

}  // namespace sluice::expr
