// The higher-order functions: transform, filter, exists, forall, aggregate (reduce), zip_with,
// array_sort with a comparator.
// A lambda body is evaluated once per batch over every element of every row, not per element: its
// input is the outer input taken at each element's row (only the slots and lambda variables the
// body reads), its parameters bound to the elements (and their indices). aggregate folds in
// rounds, round k over the k-th element of every row that has one.
#include <algorithm>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

// The arrays of `rows` rows and their elements, flattened.
struct Flattened {
  ColumnPtr arrays;             // `rows` rows from offset 0
  ColumnPtr elements;           // the elements of every row, in order
  std::vector<int64_t> row_of;  // each element's row
  int64_t begin = 0;            // arrays->offsets[0]

  int64_t Start(int64_t row) const { return arrays->offsets[static_cast<size_t>(row)] - begin; }
  int64_t End(int64_t row) const { return arrays->offsets[static_cast<size_t>(row) + 1] - begin; }
  int64_t Length(int64_t row) const { return End(row) - Start(row); }
};

Flattened Flatten(const Datum& array, int64_t rows) {
  Flattened f;
  f.arrays = Materialize(array, rows);
  f.begin = f.arrays->offsets[0];
  const int64_t count = f.arrays->offsets[static_cast<size_t>(rows)] - f.begin;
  f.elements = Slice(f.arrays->children[0], f.begin, count);
  f.row_of.reserve(static_cast<size_t>(count));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = f.Start(r); e < f.End(r); ++e) f.row_of.push_back(r);
  }
  return f;
}

// The lambda's body evaluated over `rows` (rows of the outer input, repeated as often as needed)
// with its parameters bound to `values` (one column of rows.size() rows each): a column of
// rows.size() rows.
Result<ColumnPtr> EvaluateLambda(const BoundNode& lambda, const EvalInput& input, const std::vector<int64_t>& rows,
                                 const std::vector<ColumnPtr>& values) {
  const BoundNode& body = *lambda.args[0];
  const int64_t count = static_cast<int64_t>(rows.size());
  if (count == 0) return MakeNullColumn(body.type, 0);
  std::vector<ColumnPtr> slots, variables;
  std::vector<int64_t> numbers;
  EvalInput inner = GatherInput(body, input, rows, &slots, &variables, &numbers);
  // Each element its own number (its row's, mixed with its position), so that uuid() in a lambda
  // gives every element its own value.
  for (size_t j = 0; j < numbers.size(); ++j) {
    numbers[j] = static_cast<int64_t>(static_cast<uint64_t>(numbers[j]) * 0x9E3779B97F4A7C15ull + j);
  }
  const size_t first = static_cast<size_t>(lambda.slot);
  if (variables.size() < first + values.size()) variables.resize(first + values.size());
  for (size_t i = 0; i < values.size(); ++i) variables[first + i] = values[i];
  inner.variables = variables;
  SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(body, inner));
  return Materialize(d, count);
}

// Each element's 0-based position in its array.
ColumnPtr Positions(const Flattened& f, int64_t rows) {
  auto out = NewFixedColumn(DataType::Integer(), static_cast<int64_t>(f.row_of.size()));
  int32_t* values = reinterpret_cast<int32_t*>(out->data.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = f.Start(r); e < f.End(r); ++e) values[e] = static_cast<int32_t>(e - f.Start(r));
  }
  return out;
}

Result<Datum> TransformOrFilter(const BoundNode& node, const Datum& array, const EvalInput& input) {
  const int64_t rows = input.num_rows;
  const Flattened f = Flatten(array, rows);
  const BoundNode& lambda = *node.args[1];
  std::vector<ColumnPtr> values = {f.elements};
  if (lambda.parameters == 2) values.push_back(Positions(f, rows));  // (x, i) -> ...
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr results, EvaluateLambda(lambda, input, f.row_of, values));
  if (node.op == Op::kTransform) {
    std::vector<int64_t> offsets(static_cast<size_t>(rows) + 1, 0);
    for (int64_t r = 0; r <= rows; ++r) offsets[static_cast<size_t>(r)] = f.arrays->offsets[static_cast<size_t>(r)] - f.begin;
    std::vector<uint8_t> valid(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) valid[static_cast<size_t>(r)] = f.arrays->IsValid(r) ? 1 : 0;
    return ArrayOf(node.type, std::move(offsets), results, std::move(valid));
  }
  GatherListBuilder kept;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = f.Start(r); e < f.End(r); ++e) {
      if (results->IsValid(e) && results->Value<uint8_t>(e) != 0) kept.Add(e);
    }
    kept.EndRow(f.arrays->IsValid(r));
  }
  return kept.Finish(node.type, f.elements);
}

// exists: TRUE if the predicate holds for an element, else NULL if it was NULL for one, else
// FALSE; forall: FALSE if it fails for one, else NULL if it was NULL for one, else TRUE.
Result<Datum> ExistsOrForall(const BoundNode& node, const Datum& array, const EvalInput& input) {
  const int64_t rows = input.num_rows;
  const Flattened f = Flatten(array, rows);
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr results, EvaluateLambda(*node.args[1], input, f.row_of, {f.elements}));
  const bool decisive = node.op == Op::kExists;  // the value that settles the row
  auto out = NewFixedColumn(node.type, rows);
  uint8_t* values = out->data.data();
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 1);
  for (int64_t r = 0; r < rows; ++r) {
    if (f.arrays->IsNull(r)) {
      valid[static_cast<size_t>(r)] = 0;
      continue;
    }
    bool settled = false, saw_null = false;
    for (int64_t e = f.Start(r); e < f.End(r) && !settled; ++e) {
      if (results->IsNull(e)) {
        saw_null = true;
      } else {
        settled = (results->Value<uint8_t>(e) != 0) == decisive;
      }
    }
    values[r] = settled ? decisive : !decisive;
    if (!settled && saw_null) valid[static_cast<size_t>(r)] = 0;
  }
  SetValidity(out.get(), std::move(valid));
  return Datum{out, false};
}

Result<Datum> AggregateArray(const BoundNode& node, const Datum& array, const Datum& zero, const EvalInput& input) {
  const int64_t rows = input.num_rows;
  const Flattened f = Flatten(array, rows);
  const BoundNode& merge = *node.args[2];
  ColumnPtr accumulated = Materialize(zero, rows);
  int64_t longest = 0;
  for (int64_t r = 0; r < rows; ++r) longest = std::max(longest, f.arrays->IsValid(r) ? f.Length(r) : 0);
  for (int64_t k = 0; k < longest; ++k) {
    std::vector<int64_t> active, elements;
    for (int64_t r = 0; r < rows; ++r) {
      if (f.arrays->IsValid(r) && f.Length(r) > k) {
        active.push_back(r);
        elements.push_back(f.Start(r) + k);
      }
    }
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr merged, EvaluateLambda(merge, input, active,
                                                             {Take(accumulated, active), Take(f.elements, elements)}));
    // Rows that took part take the merged value, the others keep theirs. The merge's type may
    // differ from the accumulator's in nullability only; the accumulator's (nullable) is kept.
    if (!merged->type->Equals(*accumulated->type)) {
      auto relabeled = std::make_shared<Column>(*merged);
      relabeled->type = accumulated->type;
      merged = relabeled;
    }
    const ColumnPtr parts[] = {accumulated, merged};
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr both, Concatenate(parts));
    std::vector<int64_t> pick(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) pick[static_cast<size_t>(r)] = r;
    for (size_t j = 0; j < active.size(); ++j) pick[static_cast<size_t>(active[j])] = rows + static_cast<int64_t>(j);
    accumulated = Take(both, pick);
  }
  ColumnPtr result = accumulated;
  if (node.args.size() == 4) {
    std::vector<int64_t> all(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) all[static_cast<size_t>(r)] = r;
    SLUICE_ASSIGN_OR_RETURN(result, EvaluateLambda(*node.args[3], input, all, {accumulated}));
  }
  // A NULL array aggregates to NULL.
  std::vector<int64_t> pick(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) pick[static_cast<size_t>(r)] = f.arrays->IsValid(r) ? r : -1;
  return Datum{GatherChild(result, node.type, std::move(pick)), false};
}

Result<Datum> ZipWith(const BoundNode& node, const Datum& left_array, const Datum& right_array, const EvalInput& input) {
  const int64_t rows = input.num_rows;
  const Flattened left = Flatten(left_array, rows), right = Flatten(right_array, rows);
  std::vector<int64_t> row_of, left_at, right_at;
  std::vector<int64_t> offsets(static_cast<size_t>(rows) + 1, 0);
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 1);
  for (int64_t r = 0; r < rows; ++r) {
    if (left.arrays->IsNull(r) || right.arrays->IsNull(r)) {
      valid[static_cast<size_t>(r)] = 0;
    } else {
      const int64_t n = std::max(left.Length(r), right.Length(r));
      for (int64_t k = 0; k < n; ++k) {
        row_of.push_back(r);
        left_at.push_back(k < left.Length(r) ? left.Start(r) + k : -1);
        right_at.push_back(k < right.Length(r) ? right.Start(r) + k : -1);
      }
    }
    offsets[static_cast<size_t>(r) + 1] = static_cast<int64_t>(row_of.size());
  }
  const TypePtr& left_type = node.args[0]->type->element_type();
  const TypePtr& right_type = node.args[1]->type->element_type();
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr results,
                          EvaluateLambda(*node.args[2], input, row_of,
                                         {GatherChild(left.elements, left_type, std::move(left_at)),
                                          GatherChild(right.elements, right_type, std::move(right_at))}));
  return ArrayOf(node.type, std::move(offsets), std::move(results), std::move(valid));
}

// array_sort(a, (l, r) -> n): the comparator is evaluated once per batch over every pair of
// elements of each array (l before r in the array; the other order is the opposite sign), then
// each array is sorted stably by those answers, as Spark's TimSort orders it for a consistent
// comparator. Rows are taken in groups of at most kMaxPairs pairs.
constexpr int64_t kMaxSortedElements = 1024;
constexpr int64_t kMaxPairs = 1 << 20;

Result<Datum> SortWith(const BoundNode& node, const Datum& array, const EvalInput& input) {
  const int64_t rows = input.num_rows;
  const Flattened f = Flatten(array, rows);
  const TypePtr& element_type = node.type->element_type();
  GatherListBuilder sorted;
  std::vector<int64_t> order;
  for (int64_t first = 0; first < rows;) {
    // The pairs (i < j) of the rows [first, last): pair k compares left_at[k] with right_at[k].
    std::vector<int64_t> row_of, left_at, right_at, pair_base(static_cast<size_t>(rows), 0);
    int64_t last = first;
    for (; last < rows; ++last) {
      const int64_t n = f.arrays->IsValid(last) ? f.Length(last) : 0;
      if (n > kMaxSortedElements) {
        return Status::Error(errors::kInvalidParameterValue,
                             "array_sort with a comparator sorts arrays of at most " +
                                 std::to_string(kMaxSortedElements) + " elements; this one has " + std::to_string(n));
      }
      if (last > first && static_cast<int64_t>(row_of.size()) + n * (n - 1) / 2 > kMaxPairs) break;
      pair_base[static_cast<size_t>(last)] = static_cast<int64_t>(row_of.size());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = i + 1; j < n; ++j) {
          row_of.push_back(last);
          left_at.push_back(f.Start(last) + i);
          right_at.push_back(f.Start(last) + j);
        }
      }
    }
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr answers,
                            EvaluateLambda(*node.args[1], input, row_of,
                                           {GatherChild(f.elements, element_type, std::move(left_at)),
                                            GatherChild(f.elements, element_type, std::move(right_at))}));
    if (answers->null_count > 0) {
      return Status::Error(errors::kComparatorReturnsNull,
                           "the comparator of array_sort returned NULL; it must return a negative number, 0 or a "
                           "positive number for every pair of elements");
    }
    for (int64_t r = first; r < last; ++r) {
      const int64_t n = f.arrays->IsValid(r) ? f.Length(r) : 0;
      const int64_t base = pair_base[static_cast<size_t>(r)];
      // The answer for elements i < j of the row.
      auto answer = [&](int64_t i, int64_t j) {
        return answers->Value<int32_t>(base + i * n - i * (i + 1) / 2 + (j - i - 1));
      };
      order.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return a < b ? answer(a, b) < 0 : answer(b, a) > 0; });
      for (int64_t i : order) sorted.Add(f.Start(r) + i);
      sorted.EndRow(f.arrays->IsValid(r));
    }
    first = last;
  }
  return sorted.Finish(node.type, f.elements);
}

}  // namespace

Result<Datum> EvalHigherOrderFunction(const BoundNode& node, const EvalInput& input) {
  std::vector<Datum> values;  // the arguments that are not lambdas
  for (const BoundPtr& a : node.args) {
    if (a->op == Op::kLambda) continue;
    SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(*a, input));
    values.push_back(std::move(d));
  }
  switch (node.op) {
    case Op::kTransform:
    case Op::kFilter: return TransformOrFilter(node, values[0], input);
    case Op::kExists:
    case Op::kForall: return ExistsOrForall(node, values[0], input);
    case Op::kAggregateArray: return AggregateArray(node, values[0], values[1], input);
    case Op::kZipWith: return ZipWith(node, values[0], values[1], input);
    case Op::kArraySortWith: return SortWith(node, values[0], input);
    default: return Status::Error(errors::kInternalError, "not a higher-order function");
  }
}

}  // namespace sluice::expr
