// Insert-only merge: append the rows of a batch whose key is not in the table yet, in one commit
// with operation MERGE. It is how stream backfills and de-duplicating streams land rows exactly
// once even when the same rows arrive twice.
//
// The keys already in the table are read from the files whose statistics may hold keys of the
// batch (for a one-column key of integer, date or string type, a file whose partition value or min/max
// range holds none of the batch's keys is not read; InsertNewRowsFrom, whose keys are not known
// ahead, reads them all). The commit conflicts with any concurrent change of the table's
// data (it read the whole table), so two merges never both insert the same key.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/delta/writer.h"

namespace sluice::delta {

struct MergeOptions {
  // The columns whose values identify a row (matched ignoring case): top-level columns or dot
  // paths to fields of struct columns (`value.transaction_id`). Rows with equal keys are the same
  // row: only the first of them in the batch is inserted, and none whose key exists.
  std::vector<std::string> key_columns;
  // Recorded with the commit, and making a replay a no-op, as for WriteTable.
  std::vector<SetTransaction> transactions = {};
  // Creating the table when it does not exist yet.
  std::vector<std::string> partition_columns = {};
};

// Returns the commit's version and the number of rows inserted (num_rows). UNRESOLVED_COLUMN
// for a key column missing from the batch or the table; errors as WriteTable otherwise.
Result<WriteResult> InsertNewRows(std::shared_ptr<FileSystem> fs, const std::string& table_path, const BatchPtr& batch,
                                  const MergeOptions& options);

// Yields the next batch, or null after the last one.
using BatchSource = std::function<Result<BatchPtr>()>;

// As InsertNewRows, for rows that come in batches of `schema` from `next` (a table scan): one
// commit, in which each batch's new rows are written as it comes, so that only the keys (those of
// the table and those inserted) are held in memory, not the rows.
Result<WriteResult> InsertNewRowsFrom(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                      const TypePtr& schema, const BatchSource& next, const MergeOptions& options);

}  // namespace sluice::delta
