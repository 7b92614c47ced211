#include "sluice/pipeline/flow_operators.h"

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/relational_operators.h"
#include "sluice/expr/select.h"

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

}  // namespace

ExpectationsOperator::ExpectationsOperator(std::string flow_name, std::vector<Expectation> expectations,
                                           std::vector<expr::Expression> conditions, expr::SqlOptions sql)
    : flow_name_(std::move(flow_name)),
      expectations_(std::move(expectations)),
      conditions_(std::move(conditions)),
      sql_(sql) {}

Result<TypePtr> ExpectationsOperator::Bind(const TypePtr& input) {
  std::vector<expr::BoundExpression> bound;
  for (size_t i = 0; i < conditions_.size(); ++i) {
    Result<expr::BoundExpression> condition = expr::BindPredicate(conditions_[i], input, sql_);
    if (!condition.ok()) {
      return condition.status().WithContext("flow '" + flow_name_ + "' expectation '" + expectations_[i].name + "'");
    }
    bound.push_back(std::move(condition).value());
  }
  bound_ = std::move(bound);
  return input;
}

Status ExpectationsOperator::BeginBatch(const engine::BatchStart& /*batch*/) {
  counts_.clear();
  for (const Expectation& expectation : expectations_) {
    counts_.push_back(ExpectationCounts{expectation.name, expectation.action});
  }
  return Status::OK();
}

Result<BatchPtr> ExpectationsOperator::Push(const engine::BatchStart& batch, const BatchPtr& piece) {
  const int64_t n = piece->num_rows();
  std::vector<bool> drop(static_cast<size_t>(n), false);
  bool any_drop = false;
  for (size_t i = 0; i < expectations_.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(bound_[i].Filter(*piece, batch.timestamp_micros, &selection_));
    const int64_t passed = static_cast<int64_t>(selection_.size());
    const int64_t failed = n - passed;
    if (failed > 0 && expectations_[i].action == ExpectationAction::kFail) {
      return Status::Error(errors::kExpectationViolation,
                           "flow '" + flow_name_ + "': expectation '" + expectations_[i].name + "' (" +
                               expectations_[i].condition + ") failed on " + std::to_string(failed) + " of " +
                               std::to_string(n) + " rows; nothing of this batch was written");
    }
    ExpectationCounts& count = counts_[i];
    count.passed += passed;
    count.failed += failed;
    if (failed > 0 && expectations_[i].action == ExpectationAction::kDrop) {
      for (int64_t row : Complement(selection_, n)) {
        if (!drop[static_cast<size_t>(row)]) ++count.dropped;
        drop[static_cast<size_t>(row)] = true;
      }
      any_drop = true;
    }
  }
  if (!any_drop) return piece;
  std::vector<int64_t> kept;
  kept.reserve(static_cast<size_t>(n));
  for (int64_t row = 0; row < n; ++row) {
    if (!drop[static_cast<size_t>(row)]) kept.push_back(row);
  }
  return Take(piece, kept);
}

Result<TypePtr> EventTimeOperator::Bind(const TypePtr& input) {
  timestamp_index_ = input->FieldIndex("timestamp");
  if (timestamp_index_ >= 0 && input->field(timestamp_index_).type->id() != TypeId::kTimestamp) timestamp_index_ = -1;
  return input;
}

Result<BatchPtr> EventTimeOperator::Push(const engine::BatchStart& /*batch*/, const BatchPtr& piece) {
  if (timestamp_index_ < 0) return piece;
  const Column& times = *piece->column(timestamp_index_);
  for (int64_t row = 0; row < piece->num_rows(); ++row) {
    if (times.IsNull(row)) continue;
    const int64_t micros = times.Value<int64_t>(row);
    if (!newest_micros_ || micros > *newest_micros_) newest_micros_ = micros;
  }
  return piece;
}

Result<FlowOperators> MakeFlowOperators(const FlowSpec& flow, expr::SqlOptions sql, engine::OutputMode mode) {
  const std::string context = "flow '" + flow.name + "'";
  std::optional<expr::Expression> where;
  std::vector<expr::NamedExpression> select;
  std::optional<expr::SelectStatement> aggregation;
  if (flow.sql) {
    SLUICE_ASSIGN_OR_RETURN(expr::SelectStatement statement, expr::ParseSelect(*flow.sql));
    where = statement.where;
    if (statement.is_aggregation()) {
      aggregation = std::move(statement);
    } else {
      select = std::move(statement.items);
    }
  }
  if (flow.where) {
    SLUICE_ASSIGN_OR_RETURN(where, expr::Expression::Parse(*flow.where));
  }
  for (const std::string& item : flow.select) {
    SLUICE_ASSIGN_OR_RETURN(expr::NamedExpression named, expr::ParseNamedExpression(item));
    select.push_back(std::move(named));
  }
  std::vector<expr::Expression> conditions;
  for (const Expectation& expectation : flow.expectations) {
    SLUICE_ASSIGN_OR_RETURN(expr::Expression condition, expr::Expression::Parse(expectation.condition));
    conditions.push_back(std::move(condition));
  }

  FlowOperators made;
  if (where) made.operators.push_back(std::make_unique<engine::FilterOperator>(*where, sql, context + " where"));
  if (aggregation) {
    made.operators.push_back(
        std::make_unique<engine::AggregateOperator>(std::move(*aggregation), mode, sql, context + " sql"));
  }
  if (!select.empty()) {
    made.operators.push_back(std::make_unique<engine::ProjectOperator>(std::move(select), sql, context + " select"));
  }
  if (!flow.dedup.empty()) {
    made.operators.push_back(std::make_unique<engine::DeduplicateOperator>(flow.dedup, sql, context + " dedup"));
  }
  if (!flow.expectations.empty()) {
    auto expectations = std::make_unique<ExpectationsOperator>(flow.name, flow.expectations, std::move(conditions), sql);
    made.expectations = expectations.get();
    made.operators.push_back(std::move(expectations));
  }
  return made;
}

}  // namespace sluice::pipeline
