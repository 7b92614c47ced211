// Batch writes of record batches into a PostgreSQL table (`format: postgresql`, `mode` one of
// append, overwrite, errorifexists, ignore).
//
// Every write is one database transaction: until Commit() returns OK nobody sees any of its rows,
// and a writer destroyed without Commit() (or a lost connection) leaves the table as it was.
//
//   append         binary COPY into the table, created first when missing (columns typed by
//                  PgColumnType). The table's columns named like the batch's must hold exactly
//                  the types PgColumnType gives (binary COPY), or the server refuses the write.
//   overwrite      the rows are COPYed into a temporary staging table while the target stays
//                  readable; Commit() then truncates the target and inserts the staged rows in the
//                  same transaction. Readers never see an empty or partial table: they see the
//                  old contents until the commit and the new ones after (readers wait on the
//                  table's lock only during the final server-side insert). The table keeps its
//                  indexes, grants and dependent views; values are converted to its column types
//                  as an INSERT would.
//   errorifexists  PG_TABLE_ALREADY_EXISTS when the table exists, else as append.
//   ignore         nothing is written when the table exists, else as append.
//
// Rows travel as binary COPY data encoded a few thousand rows at a time; a thread of the writer's
// own sends each chunk while the caller's thread encodes the next, so encoding overlaps the
// server's work and memory stays bounded whatever the batch size.
//
// Table names follow ParseTableName (`table` or `schema.table`, simple identifiers). A writer is
// used by one thread at a time. Errors: INVALID_OPTIONS (unknown mode), INVALID_ARGUMENT (bad table
// name), DATATYPE_MISMATCH (a batch whose schema differs from the writer's),
// PG_CONNECTION_FAILED, PG_QUERY_FAILED (the server refused a statement or the data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::connectors {

enum class PgWriteMode { kAppend, kOverwrite, kErrorIfExists, kIgnore };

// "append", "overwrite", "errorifexists" (or "error", "default"), "ignore", in any case.
Result<PgWriteMode> ParsePgWriteMode(std::string_view text);

struct PgBatchWriteOptions {
  std::string conninfo;  // a libpq connection string
  std::string dbtable;   // `table` or `schema.table`
  PgWriteMode mode = PgWriteMode::kErrorIfExists;
};

class PgBatchWriter {
 public:
  // Connects, opens the transaction and prepares the table for rows of `schema` (a struct type).
  static Result<std::unique_ptr<PgBatchWriter>> Open(const PgBatchWriteOptions& options, TypePtr schema);
  ~PgBatchWriter();
  PgBatchWriter(const PgBatchWriter&) = delete;
  PgBatchWriter& operator=(const PgBatchWriter&) = delete;

  // Sends the batch's rows. After a failure the writer only accepts its destruction.
  Status Write(const RecordBatch& batch);
  // Makes every written row visible at once.
  Status Commit();
  // Whether the rows are discarded (mode ignore and the table existed).
  bool skipped() const { return skipped_; }

 private:
  PgBatchWriter() = default;
  Status Fail(Status status);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool skipped_ = false;
};

// Opens a writer, writes every batch and commits.
Status WritePostgres(const PgBatchWriteOptions& options, TypePtr schema, const std::vector<BatchPtr>& batches);

}  // namespace sluice::connectors
