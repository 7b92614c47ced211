// SortIndices: a stable sort of row indices. The type of each key column is looked at once, to
// pick a typed comparator; the sort itself never switches on types per row. With one key the
// typed comparator is inlined into std::stable_sort; with several, each key's comparator is
// called in turn until one tells the rows apart.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice {
namespace {

// Three-way comparison of two rows of one column: negative, zero or positive. Nulls first.
template <typename T>
struct FixedComparator {
  const Column* column;
  int operator()(int64_t a, int64_t b) const {
    if (int order = CompareNulls(a, b); order != 2) return order;
    T x = column->Value<T>(a);
    T y = column->Value<T>(b);
    if constexpr (std::is_floating_point_v<T>) {
      // NaN after everything, all NaNs equal; -0.0 == 0.0 falls out of the plain comparisons.
      bool x_nan = std::isnan(x);
      bool y_nan = std::isnan(y);
      if (x_nan || y_nan) return static_cast<int>(x_nan) - static_cast<int>(y_nan);
    }
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  // -1, 0 or 1 when either row is null; 2 when both are valid.
  int CompareNulls(int64_t a, int64_t b) const {
    if (column->null_count == 0) return 2;
    bool a_valid = column->IsValid(a);
    bool b_valid = column->IsValid(b);
    if (a_valid && b_valid) return 2;
    return static_cast<int>(a_valid) - static_cast<int>(b_valid);
  }
};

// Byte-wise (unsigned) order, which for UTF-8 is code point order, as Spark compares strings.
struct BytesComparator {
  const Column* column;
  int operator()(int64_t a, int64_t b) const {
    if (column->null_count > 0) {
      bool a_valid = column->IsValid(a);
      bool b_valid = column->IsValid(b);
      if (!a_valid || !b_valid) return static_cast<int>(a_valid) - static_cast<int>(b_valid);
    }
    int order = column->View(a).compare(column->View(b));
    return order < 0 ? -1 : (order > 0 ? 1 : 0);
  }
};

// Calls `fn` with the typed comparator for `column`; false when the type has no order.
template <typename Fn>
bool WithComparator(const Column& column, Fn&& fn) {
  switch (column.type->id()) {
    case TypeId::kBoolean: fn(FixedComparator<uint8_t>{&column}); return true;
    case TypeId::kByte: fn(FixedComparator<int8_t>{&column}); return true;
    case TypeId::kShort: fn(FixedComparator<int16_t>{&column}); return true;
    case TypeId::kInteger:
    case TypeId::kDate: fn(FixedComparator<int32_t>{&column}); return true;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: fn(FixedComparator<int64_t>{&column}); return true;
    case TypeId::kFloat: fn(FixedComparator<float>{&column}); return true;
    case TypeId::kDouble: fn(FixedComparator<double>{&column}); return true;
    case TypeId::kDecimal: fn(FixedComparator<int128_t>{&column}); return true;
    case TypeId::kString:
    case TypeId::kBinary: fn(BytesComparator{&column}); return true;
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: return false;
  }
  return false;
}

}  // namespace

Result<std::vector<int64_t>> SortIndices(const BatchPtr& batch, std::span<const int> key_columns) {
  for (int key : key_columns) {
    if (key < 0 || key >= batch->num_columns()) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("sort key {} is out of range for a batch of {} columns", key, batch->num_columns()));
    }
    if (batch->column(key)->type->is_nested()) {
      return Status::Error(errors::kDatatypeMismatch,
                           fmt::format("cannot sort by column `{}` of type {}", batch->field(key).name,
                                       batch->column(key)->type->ToString()));
    }
  }
  std::vector<int64_t> indices(batch->num_rows());
  std::iota(indices.begin(), indices.end(), int64_t{0});
  if (key_columns.size() == 1) {
    WithComparator(*batch->column(key_columns[0]), [&](const auto& compare) {
      std::stable_sort(indices.begin(), indices.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
    });
    return indices;
  }
  std::vector<std::function<int(int64_t, int64_t)>> comparators;
  comparators.reserve(key_columns.size());
  for (int key : key_columns) {
    WithComparator(*batch->column(key), [&](const auto& compare) { comparators.emplace_back(compare); });
  }
  std::stable_sort(indices.begin(), indices.end(), [&](int64_t a, int64_t b) {
    for (const auto& compare : comparators) {
      if (int order = compare(a, b); order != 0) return order < 0;
    }
    return false;
  });
  return indices;
}

}  // namespace sluice
