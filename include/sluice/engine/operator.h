// Operator: one step of what a query does to each batch between its source and its sink
// (filtering, projecting, aggregating, deduplicating, judging expectations). A query is
// `source → operators → sink`; the engine runs its operators as an OperatorChain on the thread
// that writes the batch, piece by piece as the source reads it:
//
//   OperatorChain chain(std::move(operators));
//   SLUICE_ASSIGN_OR_RETURN(TypePtr out, chain.Bind(source_schema));   // once per input schema
//   chain.BeginBatch({batch_id, batch_time});
//   for (piece : pieces) chain.Push(piece, emit);                    // emit gets rows for the sink
//   chain.Finish(emit);                                               // an aggregation's groups
//
// Operators with state between batches (StatefulOperator) hand it to the engine, which loads the
// version a batch starts from before the batch and writes the batch's version after Finish
// (see streaming_query.h). Not thread-safe: one thread drives a chain at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/progress.h"
#include "sluice/engine/stateful_operator.h"

namespace sluice::engine {

// What every operator knows of the batch it works on.
struct BatchStart {
  int64_t batch_id = 0;
  // The batch's time (offsets/N's batchTimestampMs, in microseconds): what current_timestamp()
  // and uuid() evaluate at, so a batch run again after a crash gives the same values.
  int64_t timestamp_micros = 0;
};

class Operator {
 public:
  virtual ~Operator() = default;

  // For the progress ("filter", "project", "aggregate", "dedupe", "expectations", ...).
  virtual std::string_view name() const = 0;
  // Resolves the operator against pieces of `input` and returns the schema of the pieces it
  // gives: binding errors (UNRESOLVED_COLUMN, DATATYPE_MISMATCH, ...) come from here, before any
  // row. Binding again (another input schema) starts with no state: the engine loads it again.
  virtual Result<TypePtr> Bind(const TypePtr& input) = 0;
  // Before the first piece of each batch (and of each real_time epoch): for operators that count
  // per batch.
  virtual Status BeginBatch(const BatchStart& /*batch*/) { return Status::OK(); }
  // One piece of `batch` (the one BeginBatch announced), of the bound input schema: the rows to
  // pass on (of the output schema; no rows is fine). The piece is shared and must not be changed.
  virtual Result<BatchPtr> Push(const BatchStart& batch, const BatchPtr& piece) = 0;
  // After the batch's last piece: rows to pass on at the end of the batch (an aggregation's
  // groups), or null for none.
  virtual Result<BatchPtr> Finish(const BatchStart& /*batch*/) { return BatchPtr(); }

  // Whether this operator groups rows (its output modes are update and complete, not append).
  virtual bool aggregates() const { return false; }
  // Whether this operator keeps state between batches (then state() is it, once bound).
  virtual bool keeps_state() const { return false; }
  // The state this operator keeps between batches, or null; valid until the next Bind.
  virtual StatefulOperator* state() { return nullptr; }
};

class OperatorChain {
 public:
  using Emit = std::function<Status(BatchPtr)>;

  OperatorChain() = default;
  explicit OperatorChain(std::vector<std::unique_ptr<Operator>> operators);

  bool empty() const { return operators_.empty(); }
  bool aggregates() const;
  bool keeps_state() const;
  // The bound operators' state, in chain order (their state directories are numbered so).
  std::vector<StatefulOperator*> stateful() const;

  // Binds every operator in order; the schema of what reaches the sink. Errors as Operator::Bind.
  Result<TypePtr> Bind(const TypePtr& input);
  // The schema Bind was last given, and what it gave (null before).
  const TypePtr& input_schema() const { return input_schema_; }
  const TypePtr& output_schema() const { return output_schema_; }
  Status BeginBatch(const BatchStart& batch);
  // Runs `piece` through every operator; `emit` gets what comes out of the last one, when it has
  // rows. An empty chain emits the piece itself. A piece of another schema than the bound one (a
  // Delta table's schema evolved within the batch) binds the chain to it first, unless an
  // operator keeps state: INVALID_SCHEMA then (state is bound to one schema; a restart binds the
  // query to the new one).
  Status Push(BatchPtr piece, const Emit& emit);
  // Finishes every operator in order, each one's end-of-batch rows pushed through the ones after
  // it; then the figures of the batch are final.
  Status Finish(const Emit& emit);

  // Each operator's figures for the batch since the last BeginBatch.
  const std::vector<OperatorProgress>& progress() const { return progress_; }

 private:
  Status PushFrom(size_t first, BatchPtr piece, const Emit& emit);

  std::vector<std::unique_ptr<Operator>> operators_;
  std::vector<OperatorProgress> progress_;
  BatchStart batch_;  // the one BeginBatch was last given
  TypePtr input_schema_;
  TypePtr output_schema_;
};

// Runs `batches` (of `schema`) through `chain` as one batch at `timestamp_micros`: what comes out,
// and the output schema. For batch work with a flow's meaning (the Python package's DataFrames).
struct ChainOutput {
  TypePtr schema;
  std::vector<BatchPtr> batches;
};
Result<ChainOutput> RunChainOnce(OperatorChain& chain, const TypePtr& schema, const std::vector<BatchPtr>& batches,
                                 int64_t timestamp_micros);

}  // namespace sluice::engine
