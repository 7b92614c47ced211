// StatefulOperator: an operator of a query that keeps rows between batches (an aggregation's
// groups, a deduplication's seen keys), given to a state store as rows, version by version.
//
// A state row is the key's columns (the first num_key_columns() of state_schema()) and what the
// operator keeps for the key. With the `memory` state store the query's writer calls Reset() and
// Load() with the state version a batch starts from, then lets the operator work on the batch's
// rows, then writes ChangedState() (every StateStore::kSnapshotInterval versions also State()) as
// the batch's version, then ClearChanges(). With the `rocksdb` state store the operator has a
// StateBacking: it holds only the keys of the batch at hand, asks the backing for the rows of the
// keys it meets that it does not hold, and is Reset() after each batch's version is written.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::engine {

// Where the state rows an operator does not hold in memory are kept (RocksDbStateStore). Used from
// the query's writer thread only.
class StateBacking {
 public:
  virtual ~StateBacking() = default;
  // The stored state rows of the keys at `rows` of `keys` (key columns of the state's key
  // fields), and in `found` the index into `rows` each returned row is for. Keys are equal as
  // Spark groups values (NULL equals NULL, NaN equals NaN).
  virtual Result<BatchPtr> Find(const std::vector<ColumnPtr>& keys, const std::vector<int64_t>& rows,
                                std::vector<int64_t>* found) = 0;
  // Every stored state row, in chunks of some thousands, to `visit`; stops at its first error.
  virtual Status ForEach(const std::function<Status(const RecordBatch&)>& visit) = 0;
};

class StatefulOperator {
 public:
  virtual ~StatefulOperator() = default;

  // As Spark's progress names it: "stateStoreSave" (aggregation), "dedupe" (deduplication).
  virtual std::string_view name() const = 0;
  // The schema of State() and ChangedState().
  virtual const TypePtr& state_schema() const = 0;
  // How many leading columns of state_schema() are the key.
  virtual int num_key_columns() const = 0;
  // Every row of the state held in memory; the rows changed since ClearChanges().
  virtual Result<BatchPtr> State() = 0;
  virtual Result<BatchPtr> ChangedState() = 0;
  // Adds state rows (of state_schema()): a key already present takes the row. CANNOT_LOAD_STATE_STORE
  // for rows of another schema. Loaded rows are not changes.
  virtual Status Load(const RecordBatch& state) = 0;
  virtual void ClearChanges() = 0;
  // The state of a new query: nothing held.
  virtual void Reset() = 0;
  // The store of the rows not held in memory (not owned; it outlives its use), or null: every
  // row is held. Set before a batch, with the operator Reset().
  void set_backing(StateBacking* backing) { backing_ = backing; }

  virtual int64_t num_rows() const = 0;     // keys or groups held in memory
  virtual int64_t num_changed() const = 0;  // since ClearChanges()
  virtual int64_t memory_bytes() const = 0;

 protected:
  StateBacking* backing_ = nullptr;
};

}  // namespace sluice::engine
