#include "sluice/pipeline/flow_transform.h"

#include <algorithm>

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
  if (flow.where) {
    SLUICE_ASSIGN_OR_RETURN(transform.where_, expr::Expression::Parse(*flow.where));
  }
  for (const std::string& item : flow.select) {
    SLUICE_ASSIGN_OR_RETURN(expr::NamedExpression named, expr::ParseNamedExpression(item));
    transform.select_.push_back(std::move(named));
  }
  for (const Expectation& expectation : flow.expectations) {
    SLUICE_ASSIGN_OR_RETURN(expr::Expression condition, expr::Expression::Parse(expectation.condition));
    transform.conditions_.push_back(std::move(condition));
    transform.expectations_.push_back(expectation);
  }
  return transform;
}

bool FlowTransform::is_identity() const { return !where_ && select_.empty() && expectations_.empty(); }

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
  if (!bound_->select.empty()) {
    std::vector<ColumnPtr> columns;
    columns.reserve(bound_->select.size());
    for (const expr::BoundExpression& item : bound_->select) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, item.Evaluate(*batch));
      columns.push_back(std::move(column));
    }
    SLUICE_ASSIGN_OR_RETURN(batch, RecordBatch::Make(bound_->select_schema, std::move(columns), batch->num_rows()));
  }
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

TransformingSink::TransformingSink(FlowTransform transform, std::unique_ptr<engine::Sink> inner)
    : transform_(std::move(transform)), inner_(std::move(inner)) {}

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
  SLUICE_ASSIGN_OR_RETURN(BatchPtr out, Transform(Borrow(batch), false));
  return inner_->AddBatch(batch_id, *out);
}

class TransformingSink::PieceWriter final : public engine::BatchWriter {
 public:
  PieceWriter(TransformingSink* sink, std::unique_ptr<engine::BatchWriter> inner)
      : sink_(sink), inner_(std::move(inner)) {}
  Status Add(BatchPtr piece) override {
    // The piece itself, not a borrowed view: a transform that changes nothing hands it on.
    SLUICE_ASSIGN_OR_RETURN(BatchPtr out, sink_->Transform(piece, true));
    return inner_->Add(std::move(out));
  }
  Status Commit() override { return inner_->Commit(); }

 private:
  TransformingSink* sink_;
  std::unique_ptr<engine::BatchWriter> inner_;
};

Result<std::unique_ptr<engine::BatchWriter>> TransformingSink::BeginBatch(int64_t batch_id, TypePtr schema) {
  // The inner writer takes the transformed schema: what the transform makes of no rows.
  std::vector<ExpectationCounts> unused;
  SLUICE_ASSIGN_OR_RETURN(BatchPtr none, transform_.Apply(RecordBatch::Empty(schema), &unused));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::BatchWriter> inner, inner_->BeginBatch(batch_id, none->schema()));
  // The pieces' counts add up to the batch's.
  counts_.clear();
  output_rows_ = 0;
  return std::unique_ptr<engine::BatchWriter>(new PieceWriter(this, std::move(inner)));
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
