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
  stored_.resize(static_cast<size_t>(seen_->size()), 0);
  if (backing_ != nullptr && !first_seen.empty()) {
    // Keys new to memory that the backing holds were seen in an earlier batch.
    std::vector<int64_t> found;
    SLUICE_RETURN_IF_ERROR(backing_->Find(keys, first_seen, &found).status());
    std::vector<uint8_t> seen_before(first_seen.size(), 0);
    for (int64_t i : found) {
      seen_before[static_cast<size_t>(i)] = 1;
      stored_[static_cast<size_t>(ids[static_cast<size_t>(first_seen[static_cast<size_t>(i)])])] = 1;
    }
    std::vector<int64_t> unseen;
    for (size_t i = 0; i < first_seen.size(); ++i) {
      if (!seen_before[i]) unseen.push_back(first_seen[i]);
    }
    first_seen = std::move(unseen);
  }
  if (static_cast<int64_t>(first_seen.size()) == rows->num_rows()) return rows;
  return Take(rows, first_seen);
}

std::vector<int64_t> Deduplication::ChangedIds() const {
  std::vector<int64_t> ids;
  for (int64_t id = changed_from_; id < seen_->size(); ++id) {
    if (static_cast<size_t>(id) >= stored_.size() || !stored_[static_cast<size_t>(id)]) ids.push_back(id);
  }
  return ids;
}

Result<BatchPtr> Deduplication::Keys(const std::vector<int64_t>& ids) {
  std::vector<ColumnPtr> columns;
  SLUICE_RETURN_IF_ERROR(seen_->Append(ids, &columns));
  return RecordBatch::Make(state_schema_, std::move(columns), static_cast<int64_t>(ids.size()));
}

Result<BatchPtr> Deduplication::State() {
  std::vector<int64_t> ids(static_cast<size_t>(seen_->size()));
  for (size_t id = 0; id < ids.size(); ++id) ids[id] = static_cast<int64_t>(id);
  return Keys(ids);
}
Result<BatchPtr> Deduplication::ChangedState() { return Keys(ChangedIds()); }
int64_t Deduplication::num_changed() const { return static_cast<int64_t>(ChangedIds().size()); }

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
  stored_.clear();
  changed_from_ = 0;
}

int64_t Deduplication::num_rows() const { return seen_->size(); }
int64_t Deduplication::memory_bytes() const { return seen_->memory_bytes(); }

}  // namespace sluice::engine
