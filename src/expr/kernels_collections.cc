// Arrays and maps made from others: flatten, get, array_insert, sequence, arrays_zip,
// map_from_arrays, map_concat.
#include <algorithm>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

// sequence() and array_insert() make arrays of the length they are asked for: beyond this many
// elements an array is refused, as Spark refuses one beyond its largest array.
constexpr int64_t kMaxMadeElements = 1 << 24;

Status TooLong(const BoundNode& node, int64_t elements) {
  return Status::Error(errors::kCollectionSizeLimitExceeded,
                       fmt::format("{} would make an array of {} elements, more than the {} one array may hold",
                                   node.name, elements, kMaxMadeElements));
}

// The rows of an array (or map) column: [Begin(r), End(r)) of its children.
struct Rows {
  ColumnPtr column;
  int64_t Begin(int64_t r) const { return column->offsets[static_cast<size_t>(r)]; }
  int64_t End(int64_t r) const { return column->offsets[static_cast<size_t>(r) + 1]; }
  int64_t Length(int64_t r) const { return End(r) - Begin(r); }
  bool IsNull(int64_t r) const { return column->IsNull(r); }
};

Result<Datum> Flatten(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Rows outer{Materialize(args[0], rows)};
  const Rows inner{outer.column->children[0]};
  GatherListBuilder list;
  for (int64_t r = 0; r < rows; ++r) {
    bool valid = !outer.IsNull(r);
    for (int64_t a = outer.Begin(r); valid && a < outer.End(r); ++a) valid = !inner.IsNull(a);
    if (valid) {
      for (int64_t a = outer.Begin(r); a < outer.End(r); ++a) {
        for (int64_t e = inner.Begin(a); e < inner.End(a); ++e) list.Add(e);
      }
    }
    list.EndRow(valid);
  }
  return list.Finish(node.type, inner.column->children[0]);
}

// get(array, i): the element at 0-based i, NULL outside the array (in either mode).
Result<Datum> Get(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Rows array{Materialize(args[0], rows)};
  FixedReader<int32_t> index = ReadFixed<int32_t>(args[1]);
  ValidityReader index_valid = ReadValidity(args[1]);
  std::vector<int64_t> picked(static_cast<size_t>(rows), -1);
  for (int64_t r = 0; r < rows; ++r) {
    if (array.IsNull(r) || !index_valid(r)) continue;
    const int64_t i = index[r];
    if (i >= 0 && i < array.Length(r)) picked[static_cast<size_t>(r)] = array.Begin(r) + i;
  }
  return Datum{GatherChild(array.column->children[0], node.type, std::move(picked)), false};
}

// array_insert(array, pos, value): 1-based, negative from the end (-1 after the last element);
// beyond either end the array is padded with NULLs; 0 is INVALID_INDEX_OF_ZERO.
Result<Datum> ArrayInsert(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Rows array{Materialize(args[0], rows)};
  FixedReader<int32_t> position = ReadFixed<int32_t>(args[1]);
  ValidityReader position_valid = ReadValidity(args[1]);
  const ColumnPtr value = Materialize(args[2], rows);
  const ColumnPtr parts[] = {array.column->children[0], value};
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr source, Concatenate(parts));
  const int64_t value_base = array.column->children[0]->length;
  GatherListBuilder list;
  for (int64_t r = 0; r < rows; ++r) {
    if (array.IsNull(r) || !position_valid(r)) {
      list.EndRow(false);
      continue;
    }
    const int64_t n = array.Length(r), p = position[r];
    if (p == 0) {
      return Status::Error(errors::kInvalidIndexOfZero,
                           "The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1)");
    }
    // Where the value goes among n + pad slots, 0-based, and the NULLs padded before or after.
    int64_t at = p > 0 ? p - 1 : n + p + 1;
    int64_t pad_before = 0;  // between the value and the first element
    if (at < 0) {
      pad_before = -at;
      at = 0;
    }
    const int64_t pad_after = std::max<int64_t>(0, at - n);
    if (n + 1 + pad_before + pad_after > kMaxMadeElements) return TooLong(node, n + 1 + pad_before + pad_after);
    const int64_t inserted = value->IsNull(r) ? -1 : value_base + r;
    if (pad_before > 0) {
      list.Add(inserted);
      for (int64_t k = 0; k < pad_before; ++k) list.Add(-1);
      for (int64_t e = array.Begin(r); e < array.End(r); ++e) list.Add(e);
    } else {
      for (int64_t k = 0; k < std::min(at, n); ++k) list.Add(array.Begin(r) + k);
      for (int64_t k = 0; k < pad_after; ++k) list.Add(-1);
      list.Add(inserted);
      for (int64_t k = at; k < n; ++k) list.Add(array.Begin(r) + k);
    }
    list.EndRow(true);
  }
  return list.Finish(node.type, source);
}

// sequence(start, stop[, step]) of integers: step 1 or -1 by default; a step that does not lead
// from start to stop is an error, as Spark's.
Result<Datum> Sequence(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  std::vector<ColumnPtr> bounds;
  for (const Datum& d : args) {
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr wide, CastColumn(*Materialize(d, rows), DataType::Long(), EvalMode::kLegacy));
    bounds.push_back(wide);
  }
  std::vector<int64_t> values;
  std::vector<int64_t> offsets = {0};
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 1);
  for (int64_t r = 0; r < rows; ++r) {
    if (std::any_of(bounds.begin(), bounds.end(), [&](const ColumnPtr& b) { return b->IsNull(r); })) {
      valid[static_cast<size_t>(r)] = 0;
      offsets.push_back(static_cast<int64_t>(values.size()));
      continue;
    }
    const int64_t start = bounds[0]->Value<int64_t>(r), stop = bounds[1]->Value<int64_t>(r);
    const int64_t step = bounds.size() > 2 ? bounds[2]->Value<int64_t>(r) : (start <= stop ? 1 : -1);
    if ((step == 0 && start != stop) || (step > 0 && start > stop) || (step < 0 && start < stop)) {
      return Status::Error(errors::kInvalidParameterValue,
                           fmt::format("Illegal sequence boundaries: {} to {} by {}", start, stop, step));
    }
    const __int128 count = step == 0 ? 1 : (static_cast<__int128>(stop) - start) / step + 1;
    if (count > kMaxMadeElements) return TooLong(node, static_cast<int64_t>(std::min<__int128>(count, INT64_MAX)));
    for (int64_t k = 0; k < static_cast<int64_t>(count); ++k) values.push_back(start + k * step);
    offsets.push_back(static_cast<int64_t>(values.size()));
  }
  auto longs = NewFixedColumn(DataType::Long(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), reinterpret_cast<int64_t*>(longs->data.data()));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr elements, CastColumn(*longs, node.type->element_type(), EvalMode::kLegacy));
  return ArrayOf(node.type, std::move(offsets), std::move(elements), std::move(valid));
}

// arrays_zip(a, b, ...): structs of the i-th elements, the shorter arrays padded with NULLs;
// NULL when any array is.
Result<Datum> ArraysZip(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  std::vector<Rows> arrays;
  for (const Datum& d : args) arrays.push_back(Rows{Materialize(d, rows)});
  std::vector<std::vector<int64_t>> picked(arrays.size());
  std::vector<int64_t> offsets = {0};
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 1);
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t longest = 0;
    bool any_null = false;
    for (const Rows& a : arrays) {
      any_null = any_null || a.IsNull(r);
      if (!a.IsNull(r)) longest = std::max(longest, a.Length(r));
    }
    if (any_null) {
      valid[static_cast<size_t>(r)] = 0;
    } else {
      for (int64_t k = 0; k < longest; ++k) {
        for (size_t a = 0; a < arrays.size(); ++a) {
          picked[a].push_back(k < arrays[a].Length(r) ? arrays[a].Begin(r) + k : -1);
        }
      }
      count += longest;
    }
    offsets.push_back(count);
  }
  auto structs = std::make_shared<Column>();
  structs->type = node.type->element_type();
  structs->length = count;
  for (size_t a = 0; a < arrays.size(); ++a) {
    structs->children.push_back(
        GatherChild(arrays[a].column->children[0], structs->type->field(static_cast<int>(a)).type, std::move(picked[a])));
  }
  return ArrayOf(node.type, std::move(offsets), std::move(structs), std::move(valid));
}

// The entries of one map row, checked as Spark's default mapKeyDedupPolicy (EXCEPTION) checks
// them: a NULL key is NULL_MAP_KEY, a key given twice DUPLICATED_MAP_KEY.
Status CheckKeys(const BoundNode& node, const Column& keys, const std::vector<int64_t>& entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (keys.IsNull(entries[i])) return Status::Error(errors::kNullMapKey, "a map key cannot be NULL in " + PrintBound(node));
    for (size_t j = 0; j < i; ++j) {
      if (RowsEqual(keys, entries[j], keys, entries[i])) {
        return Status::Error(errors::kDuplicatedMapKey,
                             fmt::format("the key {} is given twice in {}", FormatValue(keys, entries[i]), PrintBound(node)));
      }
    }
  }
  return Status::OK();
}

Result<Datum> MapFromArrays(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const Rows keys{Materialize(args[0], rows)}, values{Materialize(args[1], rows)};
  GatherListBuilder map;
  std::vector<int64_t> key_rows, value_rows, entries;
  for (int64_t r = 0; r < rows; ++r) {
    if (keys.IsNull(r) || values.IsNull(r)) {
      map.EndRow(false);
      continue;
    }
    if (keys.Length(r) != values.Length(r)) {
      return Status::Error(errors::kInvalidParameterValue,
                           fmt::format("the key array and the value array of map_from_arrays must have the same length, "
                                       "not {} and {}",
                                       keys.Length(r), values.Length(r)));
    }
    entries.clear();
    for (int64_t e = keys.Begin(r); e < keys.End(r); ++e) entries.push_back(e);
    SLUICE_RETURN_IF_ERROR(CheckKeys(node, *keys.column->children[0], entries));
    for (int64_t k = 0; k < keys.Length(r); ++k) {
      map.Add(static_cast<int64_t>(key_rows.size()));
      key_rows.push_back(keys.Begin(r) + k);
      value_rows.push_back(values.Begin(r) + k);
    }
    map.EndRow(true);
  }
  return map.FinishMap(node.type, Take(keys.column->children[0], key_rows), Take(values.column->children[0], value_rows));
}

Result<Datum> MapConcat(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  std::vector<Rows> maps;
  std::vector<ColumnPtr> all_keys, all_values;
  std::vector<int64_t> base;
  int64_t total = 0;
  for (const Datum& d : args) {
    maps.push_back(Rows{Materialize(d, rows)});
    all_keys.push_back(maps.back().column->children[0]);
    all_values.push_back(maps.back().column->children[1]);
    base.push_back(total);
    total += all_keys.back()->length;
  }
  if (maps.empty()) {
    GatherListBuilder empty;
    for (int64_t r = 0; r < rows; ++r) empty.EndRow(true);
    return empty.FinishMap(node.type, MakeNullColumn(node.type->key_type(), 0), MakeNullColumn(node.type->value_type(), 0));
  }
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr keys, Concatenate(all_keys));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr values, Concatenate(all_values));
  GatherListBuilder map;
  std::vector<int64_t> entries;
  for (int64_t r = 0; r < rows; ++r) {
    if (std::any_of(maps.begin(), maps.end(), [&](const Rows& m) { return m.IsNull(r); })) {
      map.EndRow(false);
      continue;
    }
    entries.clear();
    for (size_t m = 0; m < maps.size(); ++m) {
      for (int64_t e = maps[m].Begin(r); e < maps[m].End(r); ++e) entries.push_back(base[m] + e);
    }
    SLUICE_RETURN_IF_ERROR(CheckKeys(node, *keys, entries));
    for (int64_t e : entries) map.Add(e);
    map.EndRow(true);
  }
  return map.FinishMap(node.type, keys, values);
}

}  // namespace

Result<Datum> EvalCollectionFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  switch (node.op) {
    case Op::kFlatten: return Flatten(node, args, rows);
    case Op::kGet: return Get(node, args, rows);
    case Op::kArrayInsert: return ArrayInsert(node, args, rows);
    case Op::kSequence: return Sequence(node, args, rows);
    case Op::kArraysZip: return ArraysZip(node, args, rows);
    case Op::kMapFromArrays: return MapFromArrays(node, args, rows);
    case Op::kMapConcat: return MapConcat(node, args, rows);
    default: return Status::Error(errors::kInternalError, "not a collection function");
  }
}

}  // namespace sluice::expr
