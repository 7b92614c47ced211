// StatefulOperator: an operator of a query that keeps rows between batches (an aggregation's
// groups, a deduplication's seen keys), given to a StateStore as rows, version by version.
//
// The query's writer calls Reset() and Load() with the state version a batch starts from, then
// lets the operator work on the batch's rows, then writes ChangedState() (every
// StateStore::kSnapshotInterval versions also State()) as the batch's version, then
// ClearChanges(). Not thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::engine {

class StatefulOperator {
 public:
  virtual ~StatefulOperator() = default;

  // As Spark's progress names it: "stateStoreSave" (aggregation), "dedupe" (deduplication).
  virtual std::string_view name() const = 0;
  // The schema of State() and ChangedState().
  virtual const TypePtr& state_schema() const = 0;
  // Every row of the state; the rows changed since ClearChanges().
  virtual Result<BatchPtr> State() = 0;
  virtual Result<BatchPtr> ChangedState() = 0;
  // Adds state rows (of state_schema()): a key already present takes the row. CANNOT_LOAD_STATE_STORE
  // for rows of another schema.
  virtual Status Load(const RecordBatch& state) = 0;
  virtual void ClearChanges() = 0;
  // The state of a new query: nothing held.
  virtual void Reset() = 0;

  virtual int64_t num_rows() const = 0;     // keys or groups held
  virtual int64_t num_changed() const = 0;  // since ClearChanges()
  virtual int64_t memory_bytes() const = 0;
};

}  // namespace sluice::engine
