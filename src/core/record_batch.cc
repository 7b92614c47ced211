#include "sluice/core/record_batch.h"

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"

namespace sluice {

Result<BatchPtr> RecordBatch::Make(TypePtr schema, std::vector<ColumnPtr> columns, int64_t num_rows) {
  if (schema == nullptr || schema->id() != TypeId::kStruct) {
    return Status::Error(errors::kInvalidSchema, "a batch schema must be a struct type");
  }
  if (static_cast<int>(columns.size()) != schema->num_fields()) {
    return Status::Error(errors::kInvalidArgument, "batch has " + std::to_string(columns.size()) +
                                                       " columns for " + std::to_string(schema->num_fields()) + " fields");
  }
  for (int i = 0; i < schema->num_fields(); ++i) {
    const Field& f = schema->field(i);
    if (columns[i] == nullptr || columns[i]->length != num_rows) {
      return Status::Error(errors::kInvalidArgument, "column `" + f.name + "` does not hold " + std::to_string(num_rows) + " rows");
    }
    if (!columns[i]->type->Equals(*f.type)) {
      return Status::Error(errors::kDatatypeMismatch, "column `" + f.name + "` is " + columns[i]->type->ToString() +
                                                          " but the schema says " + f.type->ToString());
    }
  }
  return BatchPtr(std::make_shared<RecordBatch>(std::move(schema), std::move(columns), num_rows));
}

BatchPtr RecordBatch::Empty(TypePtr schema) {
  std::vector<ColumnPtr> columns;
  for (const Field& f : schema->fields()) columns.push_back(ColumnBuilder::Make(f.type)->Finish());
  return std::make_shared<RecordBatch>(std::move(schema), std::move(columns), 0);
}

}  // namespace sluice
