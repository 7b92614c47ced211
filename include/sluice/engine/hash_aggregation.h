// HashAggregation: the groups of a streaming aggregation (GROUP BY keys, aggregate functions)
// kept in memory across batches, with their state as rows for a StateStore — or, given a
// StateBacking (the rocksdb state store), only the groups of the batch at hand, the others read
// from the backing when a row meets them.
//
//   SLUICE_ASSIGN_OR_RETURN(auto groups, HashAggregation::Make(plan, options));
//   groups->Add(*rows);                                    // each piece of a batch
//   SLUICE_ASSIGN_OR_RETURN(BatchPtr out, groups->Output(OutputMode::kUpdate));
//   store.Write(batch_id, *groups->ChangedState(), [&] { return groups->State(); });
//   groups->ClearChanges();
//
// Grouping follows Spark: NULL keys form a group; NaN equals NaN and -0.0 equals 0.0. The
// aggregates are Spark's: count counts rows whose arguments are all non-null (count(*) every
// row); sum and avg skip nulls and are NULL over no value; sum of integral values is bigint and of
// decimal(p,s) decimal(p+10,s) (ANSI: ARITHMETIC_OVERFLOW / NUMERIC_VALUE_OUT_OF_RANGE when it
// does not fit, else NULL for decimals and wrapping for bigint); avg of decimal(p,s) is
// decimal(p+4,s+4), of anything else double; min and max skip nulls (NaN is the greatest double);
// first and last take the first or last row's value in arrival order (skipping nulls when asked).
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/sink.h"
#include "sluice/engine/stateful_operator.h"
#include "sluice/expr/select.h"

namespace sluice::engine {

class HashAggregation final : public StatefulOperator {
 public:
  // DATATYPE_MISMATCH for min, max, first or last over a struct, array or map.
  static Result<std::unique_ptr<HashAggregation>> Make(expr::BoundAggregation plan, expr::SqlOptions options);
  ~HashAggregation() override;

  std::string_view name() const override { return "stateStoreSave"; }

  const expr::BoundAggregation& plan() const;
  // The schema of State() and ChangedState(): the keys, then each aggregate's state columns.
  const TypePtr& state_schema() const override;
  int num_key_columns() const override;

  // Adds rows (of the schema the plan was bound to) to their groups. An evaluation error
  // (ANSI) may leave some of the rows added: Reset() and load the state again after one.
  Status Add(const RecordBatch& rows);
  // Add() with the expressions at the time `now_micros` (a batch's time; see operator.h).
  Status Add(const RecordBatch& rows, int64_t now_micros);
  // Rows are numbered within their batch in the order Add() evaluates them (grouped by sliding
  // windows, each copy of a row): what uuid() and rand() in keys and arguments draw from, so no
  // two rows of a batch share a value and a batch run again gives the same ones. NewBatch()
  // numbers from 0 again; so does Reset().
  void NewBatch();
  // The result rows (the plan's output_schema, HAVING applied): the groups changed since the last
  // ClearChanges() for kUpdate, every group for kComplete. INVALID_ARGUMENT for kAppend.
  Result<BatchPtr> Output(OutputMode mode);
  Result<BatchPtr> Output(OutputMode mode, int64_t now_micros);

  // Every group's state, and the changed groups' state.
  Result<BatchPtr> State() override;
  Result<BatchPtr> ChangedState() override;
  // Adds state rows (of state_schema()): a key already present takes the row's state.
  Status Load(const RecordBatch& state) override;
  void ClearChanges() override;
  // No groups at all (a global aggregate's one group, empty).
  void Reset() override;

  int64_t num_rows() const override { return num_groups(); }
  int64_t num_groups() const;
  int64_t num_changed() const override;
  // What the groups hold in memory, roughly.
  int64_t memory_bytes() const override;

 private:
  class Impl;
  explicit HashAggregation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::engine
