// size, element_at, [], struct field access, struct(), named_struct(), array().
#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

// map(k1, v1, ...): every row a map of the same keys, in order. A null key is NULL_MAP_KEY and a
// key given twice DUPLICATED_MAP_KEY, as Spark's default mapKeyDedupPolicy (EXCEPTION) has it.
Result<Datum> MakeMap(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const int64_t pairs = static_cast<int64_t>(args.size()) / 2;
  std::vector<ColumnPtr> keys, values;
  for (int64_t p = 0; p < pairs; ++p) {
    keys.push_back(Materialize(args[static_cast<size_t>(2 * p)], rows));
    values.push_back(Materialize(args[static_cast<size_t>(2 * p + 1)], rows));
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t p = 0; p < pairs; ++p) {
      const Column& key = *keys[static_cast<size_t>(p)];
      if (key.IsNull(i)) return Status::Error(errors::kNullMapKey, "a map key cannot be NULL in " + PrintBound(node));
      for (int64_t q = 0; q < p; ++q) {
        if (RowsEqual(*keys[static_cast<size_t>(q)], i, key, i)) {
          return Status::Error(errors::kDuplicatedMapKey,
                               fmt::format("the key {} is given twice in {}", FormatValue(key, i), PrintBound(node)));
        }
      }
    }
  }
  auto out = std::make_shared<Column>();
  out->type = node.type;
  out->length = rows;
  out->offsets.resize(static_cast<size_t>(rows) + 1);
  for (int64_t i = 0; i <= rows; ++i) out->offsets[static_cast<size_t>(i)] = i * pairs;
  for (std::vector<ColumnPtr>* part : {&keys, &values}) {
    if (pairs == 0) {
      out->children.push_back(MakeNullColumn(part == &keys ? node.type->key_type() : node.type->value_type(), 0));
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr all, Concatenate(*part));
    std::vector<int64_t> indices(static_cast<size_t>(rows * pairs));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t p = 0; p < pairs; ++p) indices[static_cast<size_t>(i * pairs + p)] = p * rows + i;
    }
    out->children.push_back(Take(all, indices));
  }
  return Datum{out, false};
}

// The array functions: each row's elements are child rows offsets[r] .. offsets[r + 1].
Result<Datum> ArrayFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const ColumnPtr array = Materialize(args[0], rows);
  const ColumnPtr& elements = array->children[0];
  const std::vector<int64_t>& offsets = array->offsets;
  auto begin = [&](int64_t r) { return offsets[static_cast<size_t>(r)]; };
  auto end = [&](int64_t r) { return offsets[static_cast<size_t>(r) + 1]; };
  switch (node.op) {
    case Op::kMapKeys:
    case Op::kMapValues: {
      auto out = std::make_shared<Column>(*array);  // the map's own offsets and validity
      out->type = node.type;
      out->children = {array->children[node.op == Op::kMapKeys ? 0 : 1]};
      return Datum{out, false};
    }
    case Op::kArrayContains:
    case Op::kArrayPosition: {
      // contains: TRUE when found, else NULL if some element is NULL, else FALSE; position: 1-based,
      // 0 when absent. NULL for a NULL array or value.
      const ColumnPtr value = Materialize(args[1], rows);
      const bool contains = node.op == Op::kArrayContains;
      auto out = NewFixedColumn(node.type, rows);
      std::vector<uint8_t> validity(static_cast<size_t>(rows), 1);
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r) || value->IsNull(r)) {
          validity[static_cast<size_t>(r)] = 0;
          continue;
        }
        int64_t found = 0;
        bool saw_null = false;
        for (int64_t e = begin(r); e < end(r) && found == 0; ++e) {
          if (elements->IsNull(e)) {
            saw_null = true;
          } else if (RowsEqual(*elements, e, *value, r)) {
            found = e - begin(r) + 1;
          }
        }
        if (contains) {
          out->data[static_cast<size_t>(r)] = found > 0;
          if (found == 0 && saw_null) validity[static_cast<size_t>(r)] = 0;
        } else {
          reinterpret_cast<int64_t*>(out->data.data())[r] = found;
        }
      }
      SetValidity(out.get(), std::move(validity));
      return Datum{out, false};
    }
    case Op::kArrayMax:
    case Op::kArrayMin: {
      const bool max = node.op == Op::kArrayMax;
      std::vector<int64_t> picked(static_cast<size_t>(rows), -1);
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r)) continue;
        int64_t& best = picked[static_cast<size_t>(r)];
        for (int64_t e = begin(r); e < end(r); ++e) {
          if (elements->IsNull(e)) continue;
          const int c = best < 0 ? 0 : CompareRows(*elements, e, *elements, best);
          if (best < 0 || (max ? c > 0 : c < 0)) best = e;
        }
      }
      return Datum{GatherChild(elements, node.type, std::move(picked)), false};
    }
    case Op::kSlice: {
      FixedReader<int32_t> start = ReadFixed<int32_t>(args[1]), length = ReadFixed<int32_t>(args[2]);
      ValidityReader start_valid = ReadValidity(args[1]), length_valid = ReadValidity(args[2]);
      GatherListBuilder list;
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r) || !start_valid(r) || !length_valid(r)) {
          list.EndRow(false);
          continue;
        }
        if (start[r] == 0) {
          return Status::Error(errors::kInvalidParameterValue,
                               "slice's start 0 is invalid: positions start at 1 (negative ones from the end)");
        }
        if (length[r] < 0) {
          return Status::Error(errors::kInvalidParameterValue,
                               fmt::format("slice's length must be 0 or more, got {}", length[r]));
        }
        const int64_t n = end(r) - begin(r);
        const int64_t first = start[r] > 0 ? start[r] - 1 : n + start[r];
        for (int64_t k = std::max<int64_t>(first, 0); first >= 0 && k < std::min<int64_t>(n, first + length[r]); ++k) {
          list.Add(begin(r) + k);
        }
        list.EndRow(true);
      }
      return list.Finish(node.type, elements);
    }
    case Op::kArrayDistinct:
    case Op::kArrayCompact: {
      const bool distinct = node.op == Op::kArrayDistinct;
      GatherListBuilder list;
      std::vector<int64_t> kept;
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r)) {
          list.EndRow(false);
          continue;
        }
        kept.clear();
        bool null_kept = false;
        for (int64_t e = begin(r); e < end(r); ++e) {
          if (elements->IsNull(e)) {
            if (distinct && !null_kept) list.Add(-1);
            null_kept = true;
            continue;
          }
          if (distinct && std::any_of(kept.begin(), kept.end(), [&](int64_t k) { return RowsEqual(*elements, k, *elements, e); })) {
            continue;
          }
          kept.push_back(e);
          list.Add(e);
        }
        list.EndRow(true);
      }
      return list.Finish(node.type, elements);
    }
    case Op::kSortArray: {
      // sort_array puts NULLs first ascending and last descending; array_sort last.
      const bool ascending = args[1].column->Value<uint8_t>(0) != 0;
      const bool nulls_first = args[2].column->Value<uint8_t>(0) != 0;
      GatherListBuilder list;
      std::vector<int64_t> sorted;
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r)) {
          list.EndRow(false);
          continue;
        }
        sorted.clear();
        int64_t nulls = 0;
        for (int64_t e = begin(r); e < end(r); ++e) {
          if (elements->IsNull(e)) {
            ++nulls;
          } else {
            sorted.push_back(e);
          }
        }
        std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t x, int64_t y) {
          const int c = CompareRows(*elements, x, *elements, y);
          return ascending ? c < 0 : c > 0;
        });
        if (nulls_first) for (int64_t k = 0; k < nulls; ++k) list.Add(-1);
        for (int64_t e : sorted) list.Add(e);
        if (!nulls_first) for (int64_t k = 0; k < nulls; ++k) list.Add(-1);
        list.EndRow(true);
      }
      return list.Finish(node.type, elements);
    }
    case Op::kArrayJoin: {
      // NULL elements are skipped, or written as the replacement when one is given.
      StringReader delimiter = ReadString(args[1]);
      ValidityReader delimiter_valid = ReadValidity(args[1]);
      const bool has_replacement = args.size() > 2;
      StringReader replacement = has_replacement ? ReadString(args[2]) : delimiter;
      ValidityReader replacement_valid = has_replacement ? ReadValidity(args[2]) : delimiter_valid;
      StringWriter writer(node.type, rows);
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r) || !delimiter_valid(r) || !replacement_valid(r)) {
          writer.AppendNull();
          continue;
        }
        bool first = true;
        for (int64_t e = begin(r); e < end(r); ++e) {
          if (elements->IsNull(e) && !has_replacement) continue;
          if (!first) writer.AppendPart(delimiter[r]);
          writer.AppendPart(elements->IsNull(e) ? replacement[r] : elements->View(e));
          first = false;
        }
        writer.FinishRow();
      }
      return Datum{writer.Finish(), false};
    }
    default: {  // array_append, array_prepend: the element is the row's value of the second argument
      const ColumnPtr value = Materialize(args[1], rows);
      const ColumnPtr parts[] = {elements, value};
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr source, Concatenate(parts));
      const bool append = node.op == Op::kArrayAppend;
      GatherListBuilder list;
      for (int64_t r = 0; r < rows; ++r) {
        if (array->IsNull(r)) {
          list.EndRow(false);
          continue;
        }
        const int64_t added = value->IsNull(r) ? -1 : elements->length + r;
        if (!append) list.Add(added);
        for (int64_t e = begin(r); e < end(r); ++e) list.Add(e);
        if (append) list.Add(added);
        list.EndRow(true);
      }
      return list.Finish(node.type, source);
    }
  }
}

}  // namespace

Result<Datum> EvalNestedFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  switch (node.op) {
    case Op::kSize: {
      auto out = NewFixedColumn(node.type, rows);
      int32_t* values = reinterpret_cast<int32_t*>(out->data.data());
      const Column& c = *args[0].column;
      int64_t mask = args[0].scalar ? 0 : ~int64_t{0};
      for (int64_t i = 0; i < rows; ++i) {
        int64_t r = i & mask;
        values[i] = c.IsNull(r) ? -1 : static_cast<int32_t>(c.offsets[static_cast<size_t>(r) + 1] - c.offsets[static_cast<size_t>(r)]);
      }
      // The size of NULL is -1 in non-ANSI Spark (spark.sql.legacy.sizeOfNull), NULL in ANSI mode.
      if (node.mode == EvalMode::kAnsi) SetValidity(out.get(), CombinedValidity(args, rows));
      return Datum{out, false};
    }
    case Op::kGetField: {
      const Column& c = *args[0].column;
      const ColumnPtr& child = c.children[static_cast<size_t>(node.slot)];
      if (c.null_count == 0) return Datum{child, args[0].scalar, args[0].offset};
      // A field of a struct that is NULL is NULL, whatever the child holds at that row.
      std::vector<uint8_t> validity(static_cast<size_t>(child->length));
      for (int64_t r = 0; r < child->length; ++r) validity[static_cast<size_t>(r)] = c.IsValid(r) && child->IsValid(r);
      auto field = std::make_shared<Column>(*child);
      SetValidity(field.get(), std::move(validity));
      return Datum{field, args[0].scalar, args[0].offset};
    }
    case Op::kElementAt:
    case Op::kSubscript: {
      const Column& c = *args[0].column;
      int64_t mask = args[0].scalar ? 0 : ~int64_t{0};
      ValidityReader valid_key = ReadValidity(args[1]);
      std::vector<int64_t> indices(static_cast<size_t>(rows), -1);
      bool is_map = c.type->id() == TypeId::kMap;
      FixedReader<int32_t> position = is_map ? FixedReader<int32_t>{nullptr, 0} : ReadFixed<int32_t>(args[1]);
      int64_t key_mask = args[1].scalar ? 0 : ~int64_t{0};
      for (int64_t i = 0; i < rows; ++i) {
        int64_t r = i & mask;
        if (c.IsNull(r) || !valid_key(i)) continue;
        int64_t begin = c.offsets[static_cast<size_t>(r)], end = c.offsets[static_cast<size_t>(r) + 1];
        if (is_map) {
          const Column& keys = *c.children[0];
          for (int64_t k = begin; k < end; ++k) {
            if (RowsEqual(keys, k, *args[1].column, i & key_mask)) {
              indices[static_cast<size_t>(i)] = k;
              break;
            }
          }
          continue;
        }
        int64_t p = position[i];
        if (p == 0 && node.op == Op::kElementAt) {
          return Status::Error(errors::kInvalidIndexOfZero,
                               "The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has "
                               "index 1)");
        }
        int64_t n = end - begin;
        int64_t offset = node.op == Op::kSubscript ? p : (p > 0 ? p - 1 : (p < 0 ? n + p : -1));
        if (offset >= 0 && offset < n) {
          indices[static_cast<size_t>(i)] = begin + offset;
        } else if (node.mode == EvalMode::kAnsi) {
          const bool subscript = node.op == Op::kSubscript;
          return AnsiError(subscript ? errors::kInvalidArrayIndex : errors::kInvalidArrayIndexInElementAt, node,
                           fmt::format("the index {} is out of bounds: the array has {} elements", p, n),
                           subscript ? "try_element_at (positions from 1)" : "try_element_at");
        }
      }
      const ColumnPtr& source = is_map ? c.children[1] : c.children[0];
      return Datum{GatherChild(source, node.type, std::move(indices)), false};
    }
    case Op::kStruct: {
      auto out = std::make_shared<Column>();
      out->type = node.type;
      out->length = rows;
      for (const Datum& d : args) out->children.push_back(Materialize(d, rows));
      return Datum{out, false};
    }
    case Op::kArray: {
      auto out = std::make_shared<Column>();
      out->type = node.type;
      out->length = rows;
      int64_t k = static_cast<int64_t>(args.size());
      out->offsets.resize(static_cast<size_t>(rows) + 1);
      for (int64_t i = 0; i <= rows; ++i) out->offsets[static_cast<size_t>(i)] = i * k;
      if (k == 0) {
        out->children.push_back(MakeNullColumn(node.type->element_type(), 0));
        return Datum{out, false};
      }
      std::vector<ColumnPtr> columns;
      for (const Datum& d : args) columns.push_back(Materialize(d, rows));
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr all, Concatenate(columns));
      std::vector<int64_t> indices(static_cast<size_t>(rows * k));
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t a = 0; a < k; ++a) indices[static_cast<size_t>(i * k + a)] = a * rows + i;
      }
      out->children.push_back(Take(all, indices));
      return Datum{out, false};
    }
    case Op::kMap: return MakeMap(node, args, rows);
    case Op::kMapKeys: case Op::kMapValues: case Op::kArrayContains: case Op::kArrayPosition: case Op::kArrayMax:
    case Op::kArrayMin: case Op::kSlice: case Op::kArrayDistinct: case Op::kSortArray: case Op::kArrayJoin:
    case Op::kArrayAppend: case Op::kArrayPrepend: case Op::kArrayCompact:
      return ArrayFunction(node, args, rows);
    default: return Status::Error(errors::kInternalError, "not a nested-value function");
  }
}

}  // namespace sluice::expr
