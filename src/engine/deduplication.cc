#include "sluice/engine/deduplication.h"

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "core/group_keys.h"

namespace sluice::engine {

Result<std::unique_ptr<Deduplication>> Deduplication::Make(const std::vector<std::string>& columns,
                                                           const TypePtr& schema, expr::SqlOptions options) {
  if (columns.empty()) return Status::Error(errors::kInvalidArgument, "deduplication needs at least one column");
  std::vector<expr::BoundExpression> keys;
  std::vector<Field> fields;
  for (const std::string& column : columns) {
    SLUICE_ASSIGN_OR_RETURN(expr::Expression parsed, expr::Expression::Parse(column));
    SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression key, expr::Bind(parsed, schema, options));
    fields.push_back(Field{parsed.ToSql(), key.result_type(), key.nullable()});
    keys.push_back(std::move(key));
  }
  SLUICE_ASSIGN_OR_RETURN(TypePtr state_schema, DataType::Struct(std::move(fields)));
  return std::unique_ptr<Deduplication>(new Deduplication(std::move(keys), std::move(state_schema)));
}

Deduplication::Deduplication(std::vector<expr::BoundExpression> keys, TypePtr state_schema)
    : keys_(std::move(keys)), state_schema_(std::move(state_schema)), seen_(std::make_unique<GroupKeys>(state_schema_)) {}

Deduplication::~Deduplication() = default;

Result<BatchPtr> Deduplication::Filter(const BatchPtr& rows) {
  std::vector<ColumnPtr> keys;
  for (const expr::BoundExpression& key : keys_) {
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, key.Evaluate(*rows));
    keys.push_back(std::move(column));
  }
  std::vector<int32_t> ids;
  std::vector<int64_t> first_seen;
  SLUICE_RETURN_IF_ERROR(seen_->Assign(keys, rows->num_rows(), &ids, &first_seen));
  if (static_cast<int64_t>(first_seen.size()) == rows->num_rows()) return rows;
  return Take(rows, first_seen);
}

Result<BatchPtr> Deduplication::Keys(int64_t from) {
  std::vector<int64_t> ids;
  for (int64_t id = from; id < seen_->size(); ++id) ids.push_back(id);
  std::vector<ColumnPtr> columns;
  SLUICE_RETURN_IF_ERROR(seen_->Append(ids, &columns));
  return RecordBatch::Make(state_schema_, std::move(columns), static_cast<int64_t>(ids.size()));
}

Result<BatchPtr> Deduplication::State() { return Keys(0); }
Result<BatchPtr> Deduplication::ChangedState() { return Keys(changed_from_); }

Status Deduplication::Load(const RecordBatch& state) {
  if (!state.schema()->Equals(*state_schema_)) {
    return Status::Error(errors::kCannotLoadStateStore,
                         fmt::format("the state rows are {}, but this deduplication keeps {}",
                                     state.schema()->ToString(), state_schema_->ToString()));
  }
  std::vector<int32_t> ids;
  std::vector<int64_t> added;
  SLUICE_RETURN_IF_ERROR(seen_->Assign(state.columns(), state.num_rows(), &ids, &added));
  changed_from_ = num_rows();  // loaded keys are not changes
  return Status::OK();
}

void Deduplication::Reset() {
  seen_->Clear();
  changed_from_ = 0;
}

int64_t Deduplication::num_rows() const { return seen_->size(); }
int64_t Deduplication::memory_bytes() const { return seen_->memory_bytes(); }

}  // namespace sluice::engine
