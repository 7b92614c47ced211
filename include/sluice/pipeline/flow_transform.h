// What a flow does to each batch between its source and its sink: `where`, then `select`, then
// the expectations, which judge the rows the flow would write.
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

class FlowTransform {
 public:
  // Parses the flow's where, select and expectation conditions (PARSE_SYNTAX_ERROR otherwise),
  // to be typed and evaluated as `sql` says (the pipeline's `sql:` settings).
  static Result<FlowTransform> Make(const FlowSpec& flow, expr::SqlOptions sql);

  // Binds the flow's expressions to `input_schema`, as the first batch of that schema would: the
  // errors it would meet (UNRESOLVED_COLUMN, UNRESOLVED_ROUTINE, WRONG_NUM_ARGS, DATATYPE_MISMATCH,
  // INVALID_SCHEMA for two output columns of one name), found without data.
  Status Check(const TypePtr& input_schema) { return BindTo(input_schema); }

  // Whether the transform changes anything (no where, select or expectations: batches pass through).
  bool is_identity() const;
  // The batch the sink gets, and the expectations' counts for it in `counts` (one entry per
  // expectation, in declaration order, replacing what was there).
  Result<BatchPtr> Apply(const BatchPtr& batch, std::vector<ExpectationCounts>* counts);

 private:
  struct Bound {
    TypePtr input_schema;
    std::optional<expr::BoundExpression> where;
    std::vector<expr::BoundExpression> select;
    TypePtr select_schema;
    std::vector<expr::BoundExpression> conditions;  // one per expectation
  };
  Status BindTo(const TypePtr& input_schema);

  std::string flow_name_;
  expr::SqlOptions sql_;
  std::optional<expr::Expression> where_;
  std::vector<expr::NamedExpression> select_;
  std::vector<Expectation> expectations_;
  std::vector<expr::Expression> conditions_;
  std::optional<Bound> bound_;
  // The rows a filter or condition selected, kept across batches so that filtering touches no
  // fresh memory once it has grown.
  std::vector<int64_t> selection_;
};

// A sink that applies a FlowTransform before handing batches to `inner`, with the same batch ids,
// so the inner sink's idempotence carries over. last_counts() are the counts of the last batch
// (or, under real_time, the sums since the last EndEpoch).
class TransformingSink : public engine::Sink {
  class PieceWriter;

 public:
  TransformingSink(FlowTransform transform, std::unique_ptr<engine::Sink> inner);

  std::string description() const override { return inner_->description(); }
  std::vector<engine::OutputMode> supported_output_modes() const override { return inner_->supported_output_modes(); }
  Status Open(const engine::SinkContext& context) override { return inner_->Open(context); }
  Status AddBatch(int64_t batch_id, const RecordBatch& batch) override;
  // Transforms each piece as it comes and hands it to the inner sink's batch writer.
  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(int64_t batch_id, TypePtr schema) override;
  bool supports_real_time() const override { return inner_->supports_real_time(); }
  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override;
  Status EndEpoch(int64_t epoch_id) override;

  const std::vector<ExpectationCounts>& last_counts() const { return counts_; }
  // Rows handed to the inner sink in the last batch (or real_time epoch so far).
  int64_t last_output_rows() const { return output_rows_; }
  // The newest value of the source's top-level `timestamp` column seen so far (the Kafka record
  // time, the rate source's row time), in microseconds; nullopt when the source has none. How far
  // it trails the clock is the flow's event-time lag.
  std::optional<int64_t> newest_event_micros() const { return newest_event_micros_; }

 private:
  Result<BatchPtr> Transform(const BatchPtr& batch, bool accumulate);

  FlowTransform transform_;
  std::unique_ptr<engine::Sink> inner_;
  std::vector<ExpectationCounts> counts_;
  int64_t output_rows_ = 0;
  bool epoch_open_ = false;
  std::optional<int64_t> newest_event_micros_;
};

}  // namespace sluice::pipeline
