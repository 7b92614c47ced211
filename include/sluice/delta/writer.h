// Writing record batches into a Delta table: create, append, overwrite, truncate, with schema
// evolution and idempotent application transactions. Data files are written first, then one
// commit makes them visible (a crash in between leaves orphan files, never a partial write).
//
// Functions are thread-safe; concurrent writers (threads or processes) are reconciled by the
// transaction's optimistic concurrency (see transaction.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/delta/actions.h"
#include "sluice/delta/transaction.h"

namespace sluice::delta {

enum class WriteMode {
  kAppend,     // add the rows
  kOverwrite,  // replace every row of the table with these, in one commit
};

struct WriteOptions {
  WriteMode mode = WriteMode::kAppend;
  // When the write creates the table: its partition columns, properties, name and description.
  // Partition columns name columns of the data (ignoring case), each once, of primitive types and
  // not all of them: else DELTA_PARTITION_COLUMN_NOT_FOUND, DELTA_DUPLICATE_COLUMNS_FOUND,
  // DELTA_INVALID_PARTITION_COLUMN_TYPE, DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION. Into an
  // existing table, partition columns other than its own are DELTA_METADATA_MISMATCH (none: any).
  std::vector<std::string> partition_columns = {};
  // With mode kOverwrite into an existing table (Delta's overwriteSchema): the table takes the
  // data's schema and `partition_columns` (none: unpartitioned), checked as for a new table; its
  // id, properties and protocol stay. Ignored by appends, which must fit the table as ever.
  bool overwrite_schema = false;
  StringMap table_properties = {};
  std::optional<std::string> table_name = std::nullopt;
  // Add the batches' new columns to the table schema (nullable, also inside structs). Without it
  // a column the table does not have is DELTA_SCHEMA_MISMATCH. Data narrower than its column
  // (an int into a long, double or wide enough decimal column: any of type widening's changes)
  // is always written widened.
  bool merge_schema = false;
  // With merge_schema: a column the data holds in a wider type (byte < short < int < long,
  // float < double) is widened in the table, as Delta's typeWidening feature does it: the change
  // is recorded in the field's delta.typeChanges metadata, the feature is added to the protocol
  // (reader 3 / writer 7) and delta.enableTypeWidening set. A table whose delta.enableTypeWidening
  // is true widens so without it. Readers widen older files' values as they read them.
  bool widen_types = false;
  // Progress of applications recorded atomically with the data ({appId, version}). When every
  // appId already has a version >= the given one in the table, the write is skipped (the batch
  // was committed before): that is what makes replays of a streaming batch idempotent.
  std::vector<SetTransaction> transactions = {};
  // The version each appId must have in the table for the write to commit (nullopt: none
  // recorded), as a writer that owns an application's progress expects it (a member of a workers
  // group, for its partitions): a table that says otherwise fails the write with
  // DELTA_CONCURRENT_MODIFICATION (ConcurrentTransaction), and so does a concurrent commit that
  // records progress for one of these appIds.
  std::vector<std::pair<std::string, std::optional<int64_t>>> expected_transactions = {};
  // The commitInfo operation; WRITE by default, STREAMING UPDATE for streaming sinks.
  std::string operation = std::string(kOperationWrite);
  StringMap operation_parameters = {};
};

// Whether a write naming `named` partition columns may go into a table partitioned by `table`:
// the same columns ignoring case, or none named. Else DELTA_METADATA_MISMATCH: Delta changes a
// table's partitioning only by overwriting it with overwrite_schema.
Status CheckPartitionColumns(const std::vector<std::string>& table, const std::vector<std::string>& named);

struct WriteResult {
  int64_t version = -1;     // the version committed, or the version read when skipped
  bool skipped = false;     // every transaction was already recorded: nothing written
  int64_t num_files = 0;
  int64_t num_rows = 0;
};

// Writes `batches` (all of one schema; at least one batch, possibly empty, so that the schema
// is known) to the table at `table_path`, creating it if needed (when another writer creates it
// first, the write goes into that table instead). Columns are matched by name
// (ignoring case, like Spark); table columns missing from the batches are written as nulls when
// nullable, else DELTA_SCHEMA_MISMATCH. Errors also as Transaction::Commit.
Result<WriteResult> WriteTable(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                               const std::vector<BatchPtr>& batches, const WriteOptions& options = {});

// As WriteTable, inside a transaction the caller started (and may have read through, as an
// insert-only merge reads the keys already in the table). The transaction is spent.
Result<WriteResult> WriteInTransaction(Transaction& transaction, const std::vector<BatchPtr>& batches,
                                       const WriteOptions& options = {});

// Removes every row of the table in one commit (operation TRUNCATE). Returns the version.
Result<int64_t> TruncateTable(std::shared_ptr<FileSystem> fs, const std::string& table_path);

// The table property that allows writers to widen the table's column types.
inline constexpr std::string_view kEnableTypeWidening = "delta.enableTypeWidening";

// The table schema extended by the incoming schema's new fields (appended, nullable; nested
// struct fields too, also inside arrays and maps). A field narrower in the data than in the table
// keeps the table's type; one wider is widened when `widen` (byte < short < int < long,
// float < double: the widenings schema evolution applies by itself), the change appended to the
// field's delta.typeChanges metadata.
// DELTA_SCHEMA_MISMATCH for any other difference of types.
Result<TypePtr> MergeSchemas(const TypePtr& table_schema, const TypePtr& incoming, bool widen = false);

// What ConformToSchema does with a column, or nested struct field, that the table does not have:
// data to write is refused; a data file read may hold fields the table has dropped since (column
// mapping), which are left out. A data file read may also hold a timestamp column as timestamps
// not adjusted to UTC (timestamp_ntz), read as the table's timestamps (the same microseconds, UTC).
enum class FieldsOutsideTable { kRefuse, kLeaveOut };

// The batch's columns arranged as `table_schema` (matched by name ignoring case; missing
// nullable columns, also nested struct fields, filled with nulls; a column of a narrower type
// widened to the table's, as type widening allows). DELTA_SCHEMA_MISMATCH when a column is missing and not
// nullable, has another type, or is not in the table (unless left out).
Result<BatchPtr> ConformToSchema(const BatchPtr& batch, const TypePtr& table_schema,
                                 FieldsOutsideTable outside = FieldsOutsideTable::kRefuse);

}  // namespace sluice::delta
