// RecordBatch: a schema (a struct type) plus one column per field, all of num_rows rows.
// Immutable once built and safe to share between threads; batches are passed as
// std::shared_ptr<const RecordBatch>.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/column.h"

namespace sluice {

class RecordBatch;
using BatchPtr = std::shared_ptr<const RecordBatch>;

class RecordBatch {
 public:
  // Checks that the schema is a struct whose fields match the columns' types and lengths.
  static Result<BatchPtr> Make(TypePtr schema, std::vector<ColumnPtr> columns, int64_t num_rows);
  // An empty batch (0 rows) of a schema.
  static BatchPtr Empty(TypePtr schema);

  const TypePtr& schema() const { return schema_; }
  int64_t num_rows() const { return num_rows_; }
  int num_columns() const { return static_cast<int>(columns_.size()); }
  const ColumnPtr& column(int i) const { return columns_[i]; }
  const std::vector<ColumnPtr>& columns() const { return columns_; }
  const Field& field(int i) const { return schema_->field(i); }

  // The column at a dot path into structs ("value.user.email"; back-quote names that contain
  // dots: "`a.b`.c"), resolved case-insensitively like Spark. UNRESOLVED_COLUMN when missing or
  // ambiguous, with the closest existing names. A null struct row makes its children null.
  Result<ColumnPtr> ColumnAt(std::string_view path) const;

  RecordBatch(TypePtr schema, std::vector<ColumnPtr> columns, int64_t num_rows)
      : schema_(std::move(schema)), columns_(std::move(columns)), num_rows_(num_rows) {}

 private:
  TypePtr schema_;
  std::vector<ColumnPtr> columns_;
  int64_t num_rows_;
};

}  // namespace sluice
