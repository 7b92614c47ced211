// Take: gathers rows by index, recursively through nested columns. Each buffer is sized once and
// filled in one pass; nested children are gathered with the index list of their element rows.
#include <cstring>
#include <memory>
#include <vector>

#include "sluice/core/compute.h"

namespace sluice {
namespace {

template <size_t kWidth>
void GatherFixed(const uint8_t* in, std::span<const int64_t> indices, uint8_t* out) {
  for (size_t i = 0; i < indices.size(); ++i) {
    std::memcpy(out + i * kWidth, in + indices[i] * kWidth, kWidth);
  }
}

void GatherValues(const Column& in, std::span<const int64_t> indices, Column* out) {
  const int width = in.type->byte_width();
  out->data.resize(indices.size() * width);
  switch (width) {
    case 1: GatherFixed<1>(in.data.data(), indices, out->data.data()); break;
    case 2: GatherFixed<2>(in.data.data(), indices, out->data.data()); break;
    case 4: GatherFixed<4>(in.data.data(), indices, out->data.data()); break;
    case 8: GatherFixed<8>(in.data.data(), indices, out->data.data()); break;
    case 16: GatherFixed<16>(in.data.data(), indices, out->data.data()); break;
    default: break;
  }
}

void GatherValidity(const Column& in, std::span<const int64_t> indices, Column* out) {
  if (in.null_count == 0) return;
  out->validity.resize(indices.size());
  int64_t nulls = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    uint8_t valid = in.validity[indices[i]];
    out->validity[i] = valid;
    nulls += valid == 0;
  }
  out->null_count = nulls;
  if (nulls == 0) out->validity.clear();
}

void GatherBytes(const Column& in, std::span<const int64_t> indices, Column* out) {
  out->offsets.resize(indices.size() + 1);
  out->offsets[0] = 0;
  int64_t total = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    total += in.offsets[indices[i] + 1] - in.offsets[indices[i]];
    out->offsets[i + 1] = total;
  }
  out->data.resize(total);
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t size = out->offsets[i + 1] - out->offsets[i];
    if (size > 0) std::memcpy(out->data.data() + out->offsets[i], in.data.data() + in.offsets[indices[i]], size);
  }
}

// Rebuilds the offsets of an array or map and returns the child rows the taken rows cover.
std::vector<int64_t> GatherListOffsets(const Column& in, std::span<const int64_t> indices, Column* out) {
  out->offsets.resize(indices.size() + 1);
  out->offsets[0] = 0;
  int64_t total = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    total += in.offsets[indices[i] + 1] - in.offsets[indices[i]];
    out->offsets[i + 1] = total;
  }
  std::vector<int64_t> child_rows;
  child_rows.reserve(total);
  for (int64_t index : indices) {
    for (int64_t row = in.offsets[index]; row < in.offsets[index + 1]; ++row) child_rows.push_back(row);
  }
  return child_rows;
}

}  // namespace

ColumnPtr Take(const ColumnPtr& column, std::span<const int64_t> indices) {
  const Column& in = *column;
  auto out = std::make_shared<Column>();
  out->type = in.type;
  out->length = static_cast<int64_t>(indices.size());
  GatherValidity(in, indices, out.get());
  switch (in.type->id()) {
    case TypeId::kString:
    case TypeId::kBinary:
      GatherBytes(in, indices, out.get());
      break;
    case TypeId::kStruct:
      for (const ColumnPtr& child : in.children) out->children.push_back(Take(child, indices));
      break;
    case TypeId::kArray:
    case TypeId::kMap: {
      std::vector<int64_t> child_rows = GatherListOffsets(in, indices, out.get());
      for (const ColumnPtr& child : in.children) out->children.push_back(Take(child, child_rows));
      break;
    }
    default:
      GatherValues(in, indices, out.get());
  }
  return out;
}

BatchPtr Take(const BatchPtr& batch, std::span<const int64_t> indices) {
  std::vector<ColumnPtr> columns;
  columns.reserve(batch->num_columns());
  for (const ColumnPtr& column : batch->columns()) columns.push_back(Take(column, indices));
  return std::make_shared<RecordBatch>(batch->schema(), std::move(columns), static_cast<int64_t>(indices.size()));
}

}  // namespace sluice
