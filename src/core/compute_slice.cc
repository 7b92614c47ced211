// Slice: copies a contiguous range of rows. Offsets are rebased to start at zero, and nested
// children are sliced to the element rows the range covers.
#include <algorithm>
#include <memory>
#include <vector>

#include "sluice/core/compute.h"

namespace sluice {
namespace {

void SliceValidity(const Column& in, int64_t offset, int64_t length, Column* out) {
  if (in.null_count == 0) return;
  auto begin = in.validity.begin() + offset;
  int64_t nulls = std::count(begin, begin + length, uint8_t{0});
  if (nulls == 0) return;
  out->validity.assign(begin, begin + length);
  out->null_count = nulls;
}

// Copies the rebased offsets of rows [offset, offset + length) and returns the target range.
std::pair<int64_t, int64_t> SliceOffsets(const Column& in, int64_t offset, int64_t length, Column* out) {
  int64_t first = in.offsets[offset];
  int64_t last = in.offsets[offset + length];
  out->offsets.resize(length + 1);
  for (int64_t i = 0; i <= length; ++i) out->offsets[i] = in.offsets[offset + i] - first;
  return {first, last - first};
}

}  // namespace

ColumnPtr Slice(const ColumnPtr& column, int64_t offset, int64_t length) {
  const Column& in = *column;
  auto out = std::make_shared<Column>();
  out->type = in.type;
  out->length = length;
  SliceValidity(in, offset, length, out.get());
  switch (in.type->id()) {
    case TypeId::kString:
    case TypeId::kBinary: {
      auto [first, size] = SliceOffsets(in, offset, length, out.get());
      out->data.assign(in.data.begin() + first, in.data.begin() + first + size);
      break;
    }
    case TypeId::kStruct:
      for (const ColumnPtr& child : in.children) out->children.push_back(Slice(child, offset, length));
      break;
    case TypeId::kArray:
    case TypeId::kMap: {
      auto [first, size] = SliceOffsets(in, offset, length, out.get());
      for (const ColumnPtr& child : in.children) out->children.push_back(Slice(child, first, size));
      break;
    }
    default: {
      const int64_t width = in.type->byte_width();
      out->data.assign(in.data.begin() + offset * width, in.data.begin() + (offset + length) * width);
    }
  }
  return out;
}

BatchPtr Slice(const BatchPtr& batch, int64_t offset, int64_t length) {
  std::vector<ColumnPtr> columns;
  columns.reserve(batch->num_columns());
  for (const ColumnPtr& column : batch->columns()) columns.push_back(Slice(column, offset, length));
  return std::make_shared<RecordBatch>(batch->schema(), std::move(columns), length);
}

}  // namespace sluice
