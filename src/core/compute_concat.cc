// Concatenate: appends the rows of several columns (or batches) of one type. Offsets of each
// input are shifted by the size of everything before it; nested children are concatenated
// field by field.
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice {
namespace {

// Same type for every input; callers check that first.
ColumnPtr ConcatenateChecked(std::span<const ColumnPtr> columns) {
  const Column& head = *columns[0];
  auto out = std::make_shared<Column>();
  out->type = head.type;
  int64_t null_count = 0;
  for (const ColumnPtr& column : columns) {
    out->length += column->length;
    null_count += column->null_count;
  }
  if (null_count > 0) {
    out->validity.reserve(out->length);
    for (const ColumnPtr& column : columns) {
      if (column->null_count == 0) {
        out->validity.insert(out->validity.end(), column->length, 1);
      } else {
        out->validity.insert(out->validity.end(), column->validity.begin(), column->validity.end());
      }
    }
    out->null_count = null_count;
  }
  const TypeId id = head.type->id();
  if (id == TypeId::kStruct) {
    std::vector<ColumnPtr> parts(columns.size());
    for (size_t field = 0; field < head.children.size(); ++field) {
      for (size_t i = 0; i < columns.size(); ++i) parts[i] = columns[i]->children[field];
      out->children.push_back(ConcatenateChecked(parts));
    }
    return out;
  }
  if (id == TypeId::kString || id == TypeId::kBinary || id == TypeId::kArray || id == TypeId::kMap) {
    out->offsets.reserve(out->length + 1);
    out->offsets.push_back(0);
    int64_t base = 0;
    for (const ColumnPtr& column : columns) {
      for (int64_t row = 1; row <= column->length; ++row) out->offsets.push_back(base + column->offsets[row]);
      base += column->offsets[column->length];
    }
  }
  if (id == TypeId::kArray || id == TypeId::kMap) {
    std::vector<ColumnPtr> parts(columns.size());
    for (size_t child = 0; child < head.children.size(); ++child) {
      for (size_t i = 0; i < columns.size(); ++i) parts[i] = columns[i]->children[child];
      out->children.push_back(ConcatenateChecked(parts));
    }
    return out;
  }
  size_t bytes = 0;
  for (const ColumnPtr& column : columns) bytes += column->data.size();
  out->data.reserve(bytes);
  for (const ColumnPtr& column : columns) out->data.insert(out->data.end(), column->data.begin(), column->data.end());
  return out;
}

}  // namespace

Result<ColumnPtr> Concatenate(std::span<const ColumnPtr> columns) {
  if (columns.empty()) return Status::Error(errors::kInvalidArgument, "nothing to concatenate");
  for (const ColumnPtr& column : columns) {
    if (!column->type->Equals(*columns[0]->type)) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("cannot concatenate a {} column with a {} column", columns[0]->type->ToString(),
                                       column->type->ToString()));
    }
  }
  return ConcatenateChecked(columns);
}

Result<BatchPtr> Concatenate(std::span<const BatchPtr> batches) {
  if (batches.empty()) return Status::Error(errors::kInvalidArgument, "nothing to concatenate");
  const TypePtr& schema = batches[0]->schema();
  int64_t num_rows = 0;
  for (const BatchPtr& batch : batches) {
    if (!batch->schema()->Equals(*schema)) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("cannot concatenate a batch of {} with a batch of {}", schema->ToString(),
                                       batch->schema()->ToString()));
    }
    num_rows += batch->num_rows();
  }
  std::vector<ColumnPtr> columns;
  std::vector<ColumnPtr> parts(batches.size());
  for (int c = 0; c < schema->num_fields(); ++c) {
    for (size_t i = 0; i < batches.size(); ++i) parts[i] = batches[i]->column(c);
    columns.push_back(ConcatenateChecked(parts));
  }
  return BatchPtr(std::make_shared<RecordBatch>(schema, std::move(columns), num_rows));
}

}  // namespace sluice
