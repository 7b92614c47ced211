// What a flow does to each batch between its source and its sink: `where`, then `select`, then
// the expectations, which judge the rows the flow would write. A flow given as `sql` with GROUP BY
// or aggregate functions aggregates instead of selecting: its rows go into groups kept across
// batches (engine/hash_aggregation.h), and at the end of each batch the changed groups (update)
// or all of them (complete) are the rows the expectations judge and the sink gets.
//
// An expectation passes a row when its condition is TRUE; FALSE and NULL fail it. `expect` counts
// failing rows and keeps them, `expect_or_drop` drops them, `expect_or_fail` stops the flow with
// EXPECTATION_VIOLATION before anything of the batch is written. Expressions are bound to the
// schema of the batches as they arrive (and bound again if it changes), so binding errors
// (UNRESOLVED_COLUMN, DATATYPE_MISMATCH, ...) surface with the first batch.
//
// FlowTransform is not thread-safe; TransformingSink is used from the query's thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/deduplication.h"
#include "sluice/engine/hash_aggregation.h"
#include "sluice/engine/sink.h"
#include "sluice/engine/state_store.h"
#include "sluice/expr/expression.h"
#include "sluice/expr/select.h"
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

class FlowTransform {
 public:
  // Parses the flow's sql, or its where and select, and its expectation conditions
  // (PARSE_SYNTAX_ERROR otherwise), to be typed and evaluated as `sql` says (the pipeline's
  // `sql:` settings).
  static Result<FlowTransform> Make(const FlowSpec& flow, expr::SqlOptions sql);

  // Whether the flow aggregates (its sql has GROUP BY or aggregate functions).
  bool is_aggregation() const { return statement_.has_value(); }
  // The output columns naming a group, when the select items hold every grouping key as it is.
  std::optional<std::vector<std::string>> group_key_columns() const {
    return statement_ ? statement_->GroupKeyColumns() : std::nullopt;
  }
  // Whether the flow keeps state between batches: it aggregates or deduplicates (`dedup`).
  bool is_stateful() const { return is_aggregation() || !dedup_columns_.empty(); }
  // The operator keeping that state (the groups or the seen keys), once bound (the first Apply or
  // Check); null for a flow without state. Binding to another schema makes a new, empty one.
  engine::StatefulOperator* state_operator() {
    return groups_ ? static_cast<engine::StatefulOperator*>(groups_.get()) : dedup_.get();
  }
  // An aggregating flow's rows at the end of a batch: the groups' result as `mode` says, judged
  // by the expectations (their counts in `counts`).
  Result<BatchPtr> FinishAggregation(engine::OutputMode mode, std::vector<ExpectationCounts>* counts);

  // Binds the flow's expressions to `input_schema`, as the first batch of that schema would: the
  // errors it would meet (UNRESOLVED_COLUMN, UNRESOLVED_ROUTINE, WRONG_NUM_ARGS, DATATYPE_MISMATCH,
  // INVALID_SCHEMA for two output columns of one name), found without data.
  Status Check(const TypePtr& input_schema) { return BindTo(input_schema); }

  // Whether the transform changes anything (no where, select or expectations: batches pass through).
  bool is_identity() const;
  // The batch the sink gets, and the expectations' counts for it in `counts` (one entry per
  // expectation, in declaration order, replacing what was there). An aggregating flow adds the
  // rows to its groups and gives no rows (of the output schema) until FinishAggregation.
  Result<BatchPtr> Apply(const BatchPtr& batch, std::vector<ExpectationCounts>* counts);

 private:
  struct Bound {
    TypePtr input_schema;
    std::optional<expr::BoundExpression> where;
    std::vector<expr::BoundExpression> select;
    TypePtr select_schema;
    std::vector<expr::BoundExpression> conditions;  // one per expectation
    TypePtr output_schema;                           // of an aggregation
  };
  Status BindTo(const TypePtr& input_schema);
  Result<BatchPtr> ApplyExpectations(BatchPtr batch, std::vector<ExpectationCounts>* counts);

  std::string flow_name_;
  expr::SqlOptions sql_;
  std::optional<expr::Expression> where_;
  std::vector<expr::NamedExpression> select_;
  std::vector<Expectation> expectations_;
  std::vector<expr::Expression> conditions_;
  std::optional<expr::SelectStatement> statement_;  // an aggregating flow's sql
  std::optional<Bound> bound_;
  std::unique_ptr<engine::HashAggregation> groups_;
  std::vector<std::string> dedup_columns_;
  std::unique_ptr<engine::Deduplication> dedup_;
  // The rows a filter or condition selected, kept across batches so that filtering touches no
  // fresh memory once it has grown.
  std::vector<int64_t> selection_;
};

// Where a flow with state keeps it between batches, and what an aggregation hands on.
struct FlowState {
  std::shared_ptr<FileSystem> file_system;
  std::string directory;  // <checkpoint>/state/0
  engine::OutputMode output_mode = engine::OutputMode::kUpdate;
};

// A sink that applies a FlowTransform before handing batches to `inner`, with the same batch ids,
// so the inner sink's idempotence carries over. last_counts() are the counts of the last batch
// (or, under real_time, the sums since the last EndEpoch).
//
// A transform with state (an aggregation, a deduplication) keeps it in a StateStore at
// `state.directory`: batch N starts from state version N-1 (loaded again whenever the operator in
// memory does not hold exactly that, as after a restart or a failed batch) and writes version N before the inner sink commits, so a
// batch run again after a crash gives the same rows as its first run.
class TransformingSink : public engine::Sink {
  class PieceWriter;

 public:
  TransformingSink(FlowTransform transform, std::unique_ptr<engine::Sink> inner,
                   std::optional<FlowState> state = std::nullopt);

  std::string description() const override { return inner_->description(); }
  std::vector<engine::OutputMode> supported_output_modes() const override { return inner_->supported_output_modes(); }
  Status Open(const engine::SinkContext& context) override { return inner_->Open(context); }
  Status AddBatch(int64_t batch_id, const RecordBatch& batch) override;
  // Transforms each piece as it comes and hands it to the inner sink's batch writer.
  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(int64_t batch_id, TypePtr schema) override;
  bool supports_real_time() const override { return !transform_.is_stateful() && inner_->supports_real_time(); }
  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override;
  Status EndEpoch(int64_t epoch_id) override;
  // A stateful flow's operator: rows held, changed by the last batch, its state write, memory.
  std::vector<engine::StateOperatorProgress> state_operators() const override;

  const std::vector<ExpectationCounts>& last_counts() const { return counts_; }
  // Rows handed to the inner sink in the last batch (or real_time epoch so far).
  int64_t last_output_rows() const { return output_rows_; }
  // The newest value of the source's top-level `timestamp` column seen so far (the Kafka record
  // time, the rate source's row time), in microseconds; nullopt when the source has none. How far
  // it trails the clock is the flow's event-time lag.
  std::optional<int64_t> newest_event_micros() const { return newest_event_micros_; }

 private:
  Result<BatchPtr> Transform(const BatchPtr& batch, bool accumulate);
  // Makes the state operator hold state version `version` (-1: none).
  Status LoadState(int64_t version);
  // An aggregation's rows of batch `batch_id` handed to `inner`; then the operator's state
  // written as version `batch_id`.
  Status FinishStatefulBatch(int64_t batch_id, engine::BatchWriter* inner);

  FlowTransform transform_;
  std::unique_ptr<engine::Sink> inner_;
  std::optional<FlowState> state_;
  std::optional<engine::StateStore> store_;
  // The operator in memory and the state version it holds; a failed batch forgets both.
  const engine::StatefulOperator* loaded_operator_ = nullptr;
  int64_t loaded_version_ = -2;
  engine::StateOperatorProgress last_state_;
  std::vector<ExpectationCounts> counts_;
  int64_t output_rows_ = 0;
  bool epoch_open_ = false;
  std::optional<int64_t> newest_event_micros_;
};

}  // namespace sluice::pipeline
