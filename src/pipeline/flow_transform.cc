#include "sluice/pipeline/flow_transform.h"

#include <algorithm>
#include <chrono>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

// Rows [0, n) minus the ascending `kept` ones.
std::vector<int64_t> Complement(const std::vector<int64_t>& kept, int64_t n) {
  std::vector<int64_t> rest;
  rest.reserve(static_cast<size_t>(n) - kept.size());
  size_t k = 0;
  for (int64_t row = 0; row < n; ++row) {
    if (k < kept.size() && kept[k] == row) {
      ++k;
    } else {
      rest.push_back(row);
    }
  }
  return rest;
}

// A non-owning handle on a batch that lives for the duration of a call.
BatchPtr Borrow(const RecordBatch& batch) { return BatchPtr(BatchPtr(), &batch); }

}  // namespace

Result<FlowTransform> FlowTransform::Make(const FlowSpec& flow, expr::SqlOptions sql) {
  FlowTransform transform;
  transform.flow_name_ = flow.name;
  transform.sql_ = sql;
  if (flow.sql) {
    SLUICE_ASSIGN_OR_RETURN(expr::SelectStatement statement, expr::ParseSelect(*flow.sql));
    transform.where_ = statement.where;
    if (statement.is_aggregation()) {
      transform.statement_ = std::move(statement);
    } else {
      transform.select_ = std::move(statement.items);
    }
  }
  if (flow.where) {
    SLUICE_ASSIGN_OR_RETURN(transform.where_, expr::Expression::Parse(*flow.where));
  }
  for (const std::string& item : flow.select) {
    SLUICE_ASSIGN_OR_RETURN(expr::NamedExpression named, expr::ParseNamedExpression(item));
    transform.select_.push_back(std::move(named));
  }
  transform.dedup_columns_ = flow.dedup;
  for (const Expectation& expectation : flow.expectations) {
    SLUICE_ASSIGN_OR_RETURN(expr::Expression condition, expr::Expression::Parse(expectation.condition));
    transform.conditions_.push_back(std::move(condition));
    transform.expectations_.push_back(expectation);
  }
  return transform;
}

bool FlowTransform::is_identity() const {
  return !where_ && select_.empty() && expectations_.empty() && !is_stateful();
}

Status FlowTransform::BindTo(const TypePtr& input_schema) {
  Bound bound;
  bound.input_schema = input_schema;
  const std::string context = "flow '" + flow_name_ + "'";
  if (where_) {
    Result<expr::BoundExpression> where = expr::BindPredicate(*where_, input_schema, sql_);
    if (!where.ok()) return where.status().WithContext(context + " where");
    bound.where = std::move(where).value();
  }
  TypePtr dataset_schema = input_schema;
  if (statement_) {
    Result<expr::BoundAggregation> plan = expr::BindAggregation(*statement_, input_schema, sql_);
    if (!plan.ok()) return plan.status().WithContext(context + " sql");
    dataset_schema = bound.output_schema = plan->output_schema;
    Result<std::unique_ptr<engine::HashAggregation>> groups = engine::HashAggregation::Make(std::move(plan).value(), sql_);
    if (!groups.ok()) return groups.status().WithContext(context + " sql");
    groups_ = std::move(groups).value();
  }
  if (!select_.empty()) {
    std::vector<Field> fields;
    for (const expr::NamedExpression& item : select_) {
      Result<expr::BoundExpression> bound_item = expr::Bind(item.expression, input_schema, sql_);
      if (!bound_item.ok()) return bound_item.status().WithContext(context + " select '" + item.name + "'");
      fields.push_back(Field{item.name, bound_item->result_type(), bound_item->nullable()});
      bound.select.push_back(std::move(bound_item).value());
    }
    Result<TypePtr> select_schema = DataType::Struct(std::move(fields));
    if (!select_schema.ok()) return select_schema.status().WithContext(context + " select");
    bound.select_schema = std::move(select_schema).value();
    dataset_schema = bound.select_schema;
  }
  if (!dedup_columns_.empty()) {
    Result<std::unique_ptr<engine::Deduplication>> dedup =
        engine::Deduplication::Make(dedup_columns_, dataset_schema, sql_);
    if (!dedup.ok()) return dedup.status().WithContext(context + " dedup");
    dedup_ = std::move(dedup).value();
  }
  for (size_t i = 0; i < conditions_.size(); ++i) {
    Result<expr::BoundExpression> condition = expr::BindPredicate(conditions_[i], dataset_schema, sql_);
    if (!condition.ok()) {
      return condition.status().WithContext(context + " expectation '" + expectations_[i].name + "'");
    }
    bound.conditions.push_back(std::move(condition).value());
  }
  bound_ = std::move(bound);
  return Status::OK();
}

Result<BatchPtr> FlowTransform::Apply(const BatchPtr& input, std::vector<ExpectationCounts>* counts) {
  counts->clear();
  if (is_identity()) return input;
  if (!bound_ || !bound_->input_schema->Equals(*input->schema())) SLUICE_RETURN_IF_ERROR(BindTo(input->schema()));

  BatchPtr batch = input;
  if (bound_->where) {
    SLUICE_RETURN_IF_ERROR(bound_->where->Filter(*batch, &selection_));
    if (static_cast<int64_t>(selection_.size()) != batch->num_rows()) batch = Take(batch, selection_);
  }
  if (groups_) {
    SLUICE_RETURN_IF_ERROR(groups_->Add(*batch));
    return RecordBatch::Empty(bound_->output_schema);
  }
  if (!bound_->select.empty()) {
    std::vector<ColumnPtr> columns;
    columns.reserve(bound_->select.size());
    for (const expr::BoundExpression& item : bound_->select) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, item.Evaluate(*batch));
      columns.push_back(std::move(column));
    }
    SLUICE_ASSIGN_OR_RETURN(batch, RecordBatch::Make(bound_->select_schema, std::move(columns), batch->num_rows()));
  }
  if (dedup_) {
    SLUICE_ASSIGN_OR_RETURN(batch, dedup_->Filter(batch));
  }
  return ApplyExpectations(std::move(batch), counts);
}

Result<BatchPtr> FlowTransform::FinishAggregation(engine::OutputMode mode, std::vector<ExpectationCounts>* counts) {
  counts->clear();
  if (!groups_) return Status::Error(errors::kInternalError, "flow '" + flow_name_ + "' has no bound aggregation");
  SLUICE_ASSIGN_OR_RETURN(BatchPtr rows, groups_->Output(mode));
  return ApplyExpectations(std::move(rows), counts);
}

Result<BatchPtr> FlowTransform::ApplyExpectations(BatchPtr batch, std::vector<ExpectationCounts>* counts) {
  if (expectations_.empty()) return batch;

  const int64_t n = batch->num_rows();
  std::vector<bool> drop(static_cast<size_t>(n), false);
  bool any_drop = false;
  for (size_t i = 0; i < expectations_.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(bound_->conditions[i].Filter(*batch, &selection_));
    const std::vector<int64_t>& passing = selection_;
    ExpectationCounts count{expectations_[i].name, expectations_[i].action};
    count.passed = static_cast<int64_t>(passing.size());
    count.failed = n - count.passed;
    if (count.failed > 0 && expectations_[i].action == ExpectationAction::kFail) {
      return Status::Error(errors::kExpectationViolation,
                           "flow '" + flow_name_ + "': expectation '" + expectations_[i].name + "' (" +
                               expectations_[i].condition + ") failed on " + std::to_string(count.failed) + " of " +
                               std::to_string(n) + " rows; nothing of this batch was written");
    }
    if (count.failed > 0 && expectations_[i].action == ExpectationAction::kDrop) {
      for (int64_t row : Complement(passing, n)) {
        if (!drop[static_cast<size_t>(row)]) ++count.dropped;
        drop[static_cast<size_t>(row)] = true;
      }
      any_drop = true;
    }
    counts->push_back(std::move(count));
  }
  if (!any_drop) return batch;
  std::vector<int64_t> kept;
  kept.reserve(static_cast<size_t>(n));
  for (int64_t row = 0; row < n; ++row) {
    if (!drop[static_cast<size_t>(row)]) kept.push_back(row);
  }
  return Take(batch, kept);
}

TransformingSink::TransformingSink(FlowTransform transform, std::unique_ptr<engine::Sink> inner,
                                   std::optional<FlowState> state)
    : transform_(std::move(transform)), inner_(std::move(inner)), state_(std::move(state)) {}

Status TransformingSink::LoadState(int64_t version) {
  engine::StatefulOperator* op = transform_.state_operator();
  if (op == loaded_operator_ && version == loaded_version_) return Status::OK();
  if (!state_) return Status::Error(errors::kInternalError, "a flow with state needs a state directory");
  loaded_operator_ = nullptr;
  if (!store_ || !store_->schema()->Equals(*op->state_schema())) {
    store_.emplace(state_->file_system, state_->directory, op->state_schema());
  }
  op->Reset();
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> parts, store_->Load(version));
  for (const BatchPtr& part : parts) SLUICE_RETURN_IF_ERROR(op->Load(*part));
  op->ClearChanges();
  loaded_operator_ = op;
  loaded_version_ = version;
  return Status::OK();
}

Status TransformingSink::FinishStatefulBatch(int64_t batch_id, engine::BatchWriter* inner) {
  engine::StatefulOperator* op = transform_.state_operator();
  if (transform_.is_aggregation()) {
    std::vector<ExpectationCounts> counts;
    SLUICE_ASSIGN_OR_RETURN(BatchPtr rows, transform_.FinishAggregation(state_->output_mode, &counts));
    counts_ = std::move(counts);
    output_rows_ = rows->num_rows();
    if (rows->num_rows() > 0) SLUICE_RETURN_IF_ERROR(inner->Add(std::move(rows)));
  }
  const auto started = std::chrono::steady_clock::now();
  SLUICE_ASSIGN_OR_RETURN(BatchPtr changed, op->ChangedState());
  SLUICE_RETURN_IF_ERROR(store_->Write(batch_id, *changed, [op] { return op->State(); }));
  last_state_ = engine::StateOperatorProgress{
      std::string(op->name()), op->num_rows(), op->num_changed(),
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count(),
      op->memory_bytes()};
  op->ClearChanges();
  loaded_version_ = batch_id;
  return Status::OK();
}

std::vector<engine::StateOperatorProgress> TransformingSink::state_operators() const {
  if (!transform_.is_stateful()) return {};
  return {last_state_};
}

Result<BatchPtr> TransformingSink::Transform(const BatchPtr& batch, bool accumulate) {
  int index = batch->schema()->FieldIndex("timestamp");
  if (index >= 0 && batch->field(index).type->id() == TypeId::kTimestamp) {
    const Column& times = *batch->column(index);
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      if (times.IsNull(row)) continue;
      int64_t micros = times.Value<int64_t>(row);
      if (!newest_event_micros_ || micros > *newest_event_micros_) newest_event_micros_ = micros;
    }
  }
  std::vector<ExpectationCounts> counts;
  SLUICE_ASSIGN_OR_RETURN(BatchPtr out, transform_.Apply(batch, &counts));
  if (accumulate && counts_.size() == counts.size()) {
    for (size_t i = 0; i < counts.size(); ++i) {
      counts_[i].passed += counts[i].passed;
      counts_[i].failed += counts[i].failed;
      counts_[i].dropped += counts[i].dropped;
    }
    output_rows_ += out->num_rows();
  } else {
    counts_ = std::move(counts);
    output_rows_ = out->num_rows();
  }
  return out;
}

Status TransformingSink::AddBatch(int64_t batch_id, const RecordBatch& batch) {
  if (transform_.is_stateful()) {
    // Through the batch writer, which keeps the operator's state.
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::BatchWriter> writer, BeginBatch(batch_id, batch.schema()));
    SLUICE_RETURN_IF_ERROR(writer->Add(std::make_shared<const RecordBatch>(batch)));
    return writer->Commit();
  }
  SLUICE_ASSIGN_OR_RETURN(BatchPtr out, Transform(Borrow(batch), false));
  return inner_->AddBatch(batch_id, *out);
}

class TransformingSink::PieceWriter final : public engine::BatchWriter {
 public:
  PieceWriter(TransformingSink* sink, int64_t batch_id, std::unique_ptr<engine::BatchWriter> inner)
      : sink_(sink), batch_id_(batch_id), inner_(std::move(inner)) {}
  // A batch that does not commit leaves the groups somewhere between two versions: the next
  // batch loads them again.
  ~PieceWriter() override {
    if (!committed_) sink_->loaded_operator_ = nullptr;
  }
  Status Add(BatchPtr piece) override {
    // The piece itself, not a borrowed view: a transform that changes nothing hands it on.
    SLUICE_ASSIGN_OR_RETURN(BatchPtr out, sink_->Transform(piece, true));
    if (sink_->transform_.is_aggregation()) return Status::OK();
    return inner_->Add(std::move(out));
  }
  Status Commit() override {
    if (sink_->transform_.is_stateful()) SLUICE_RETURN_IF_ERROR(sink_->FinishStatefulBatch(batch_id_, inner_.get()));
    SLUICE_RETURN_IF_ERROR(inner_->Commit());
    committed_ = true;
    return Status::OK();
  }

 private:
  TransformingSink* sink_;
  int64_t batch_id_;
  std::unique_ptr<engine::BatchWriter> inner_;
  bool committed_ = false;
};

Result<std::unique_ptr<engine::BatchWriter>> TransformingSink::BeginBatch(int64_t batch_id, TypePtr schema) {
  // The inner writer takes the transformed schema: what the transform makes of no rows.
  std::vector<ExpectationCounts> unused;
  SLUICE_ASSIGN_OR_RETURN(BatchPtr none, transform_.Apply(RecordBatch::Empty(schema), &unused));
  if (transform_.is_stateful()) SLUICE_RETURN_IF_ERROR(LoadState(batch_id - 1));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::BatchWriter> inner, inner_->BeginBatch(batch_id, none->schema()));
  // The pieces' counts add up to the batch's.
  counts_.clear();
  output_rows_ = 0;
  return std::unique_ptr<engine::BatchWriter>(new PieceWriter(this, batch_id, std::move(inner)));
}

Status TransformingSink::AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) {
  SLUICE_ASSIGN_OR_RETURN(BatchPtr out, Transform(Borrow(rows), epoch_open_));
  epoch_open_ = true;
  return inner_->AddRealTimeRows(epoch_id, *out);
}

Status TransformingSink::EndEpoch(int64_t epoch_id) {
  epoch_open_ = false;
  return inner_->EndEpoch(epoch_id);
}

}  // namespace sluice::pipeline
