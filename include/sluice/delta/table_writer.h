// TableWriter: one write of a Delta table (as WriteTable) whose batches come one at a time.
// Each batch goes into the data files as it is given, so the caller need not hold the write's
// rows; Commit() then makes them visible in one commit. A writer destroyed before Commit, or
// after an error, commits nothing (its data files stay as orphans no reader sees).
//
// Used by one thread at a time (not necessarily the same one throughout).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/delta/writer.h"

namespace sluice::delta {

class TableWriter {
 public:
  // Starts writing batches of `schema` into the table at `table_path` (created by the commit
  // when missing), with WriteTable's options and errors. When every transaction of
  // `options.transactions` is already recorded, the writer skips: it ignores its batches and
  // Commit returns a skipped result.
  static Result<std::unique_ptr<TableWriter>> Start(std::shared_ptr<FileSystem> fs, std::string table_path,
                                                    TypePtr schema, WriteOptions options = {});
  // As Start, inside a transaction the caller started (see WriteInTransaction), which must
  // outlive the writer and is spent by Commit.
  static Result<std::unique_ptr<TableWriter>> StartInTransaction(Transaction& transaction, TypePtr schema,
                                                                 WriteOptions options = {});
  ~TableWriter();
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  // Writes the batch's rows into data files. INVALID_ARGUMENT when its schema is not the one
  // given at Start; DELTA_SCHEMA_MISMATCH as WriteTable. After an error the writer is spent.
  Status Write(const BatchPtr& batch);
  // Commits every batch written. When a concurrent writer created the table first (a writer from
  // Start only), the files go into that table if it has the schema they were written with.
  // `more_transactions` are recorded besides options.transactions: those known only once the
  // batches are written (the last Kafka offset of each partition of a stream's batch); when the
  // table already records every transaction, the commit is skipped, as Start would have skipped
  // (a writer skipped at Start stays skipped).
  Result<WriteResult> Commit(std::vector<SetTransaction> more_transactions = {});

 private:
  struct State;
  explicit TableWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sluice::delta
