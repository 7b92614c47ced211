// What a flow does to each batch between its source and its sink, as the engine's operators
// (engine/operator.h): `where` (a filter), then `select` (a projection) — or, for a flow given as
// `sql` with GROUP BY or aggregate functions, an aggregation whose groups are kept across batches
// and given at the end of each batch (the changed ones in update mode, all in complete mode) —
// then `dedup`, then the expectations, which judge the rows the flow would write.
//
// An expectation passes a row when its condition is TRUE; FALSE and NULL fail it. `expect` counts
// failing rows and keeps them, `expect_or_drop` drops them, `expect_or_fail` stops the flow with
// EXPECTATION_VIOLATION before anything of the batch is written. Expressions are bound to the
// schema of the source when the first batch starts (and again if it changes), so binding errors
// (UNRESOLVED_COLUMN, DATATYPE_MISMATCH, ...) surface then.
//
// The operators are not thread-safe; the engine drives them from one thread at a time, and the
// figures below may be read from its progress callback.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/operator.h"
#include "sluice/engine/sink.h"
#include "sluice/expr/expression.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::pipeline {

// The rows one expectation judged in one batch (or real_time epoch).
struct ExpectationCounts {
  std::string name;
  ExpectationAction action = ExpectationAction::kWarn;
  int64_t passed = 0;
  int64_t failed = 0;
  int64_t dropped = 0;  // rows removed because this expectation failed them (expect_or_drop only)
};

// A flow's expectations over the rows it would write.
class ExpectationsOperator final : public engine::Operator {
 public:
  // One condition per expectation, parsed.
  ExpectationsOperator(std::string flow_name, std::vector<Expectation> expectations,
                       std::vector<expr::Expression> conditions, expr::SqlOptions sql);
  std::string_view name() const override { return "expectations"; }
  Result<TypePtr> Bind(const TypePtr& input) override;
  Status BeginBatch(const engine::BatchStart& batch) override;
  Result<BatchPtr> Push(const engine::BatchStart& batch, const BatchPtr& piece) override;

  // One entry per expectation, in declaration order: the batch's (or epoch's) rows so far.
  const std::vector<ExpectationCounts>& counts() const { return counts_; }

 private:
  std::string flow_name_;
  std::vector<Expectation> expectations_;
  std::vector<expr::Expression> conditions_;
  expr::SqlOptions sql_;
  std::vector<expr::BoundExpression> bound_;
  std::vector<ExpectationCounts> counts_;
  std::vector<int64_t> selection_;
};

// Passes pieces on unchanged, noting the newest value of the source's top-level `timestamp`
// column (the Kafka record time, the rate source's row time): how far it trails the clock is the
// flow's event-time lag.
class EventTimeOperator final : public engine::Operator {
 public:
  std::string_view name() const override { return "eventTime"; }
  Result<TypePtr> Bind(const TypePtr& input) override;
  Result<BatchPtr> Push(const engine::BatchStart& batch, const BatchPtr& piece) override;
  // In microseconds; nullopt when the source has no such column or sent no row yet.
  std::optional<int64_t> newest_micros() const { return newest_micros_; }

 private:
  int timestamp_index_ = -1;
  std::optional<int64_t> newest_micros_;
};

// A flow's operators, and the ones whose figures the pipeline reports (owned by `operators`).
struct FlowOperators {
  std::vector<std::unique_ptr<engine::Operator>> operators;
  const ExpectationsOperator* expectations = nullptr;  // null for a flow without expectations
};

// Parses the flow's sql, or its where and select, and its expectation conditions
// (PARSE_SYNTAX_ERROR otherwise), into operators typed and evaluated as `sql` says (the pipeline's
// `sql:` settings); an aggregation gives its groups as `mode` says.
Result<FlowOperators> MakeFlowOperators(const FlowSpec& flow, expr::SqlOptions sql, engine::OutputMode mode);

}  // namespace sluice::pipeline
