// Reading the rows of a table snapshot: the live data files in path order, projected to the
// requested columns, with partition columns rebuilt from the files' partition values and
// columns missing from older files (added later by schema evolution) read as nulls. A filter
// keeps only the rows it passes and skips the files whose partition values or column statistics
// show that none of their rows can pass.
//
// A TableScan is used by one thread at a time; the snapshot it reads is kept alive by it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/delta/snapshot.h"
#include "sluice/expr/expression.h"

namespace sluice::delta {

struct ScanOptions {
  // Top-level columns to read, in this order (names matched ignoring case); empty reads all.
  std::vector<std::string> columns = {};
  // Read these files (of this table) instead of the snapshot's live files: a streaming source
  // reads the files added by some versions, a merge the files its statistics cannot rule out.
  std::optional<std::vector<AddFile>> files = std::nullopt;
  // A Spark SQL predicate over the table's columns (projected or not): only rows for which it is
  // TRUE are returned.
  std::optional<std::string> filter = std::nullopt;
  // Append to every batch the row-tracking columns kRowIdColumn and kRowCommitVersionColumn
  // (long, never null), Spark's `_metadata.row_id` and `_metadata.row_commit_version`: the id and
  // commit version a rewrite stored in the file's materialized columns, else the file's baseRowId
  // plus the row's position in the file and its defaultRowCommitVersion.
  bool row_tracking = false;
};

inline constexpr std::string_view kRowIdColumn = "_metadata.row_id";
inline constexpr std::string_view kRowCommitVersionColumn = "_metadata.row_commit_version";

class TableScan {
 public:
  // UNRESOLVED_COLUMN when a requested column is not in the table; the expression errors of
  // expr::Expression::Parse and expr::BindPredicate for a filter that is not a valid predicate
  // over the table; DELTA_PROTOCOL_UNSUPPORTED for row_tracking on a table that does not track
  // row ids.
  static Result<std::unique_ptr<TableScan>> Open(SnapshotPtr snapshot, ScanOptions options = {});

  // The schema of every batch: the table's columns by their logical names, without column
  // mapping metadata (and the row-tracking columns last when asked for).
  const TypePtr& schema() const { return schema_; }
  // The data files the scan reads: those of the snapshot (or ScanOptions::files) that the filter
  // does not rule out.
  const std::vector<AddFile>& files() const { return files_; }

  // The next batch, or nullptr after the last. DELTA_LOG_CORRUPT when a partition value does not
  // parse as its column's type or, with row_tracking, a file has no baseRowId; Parquet and IO
  // errors of the data files.
  Result<BatchPtr> Next();

 private:
  // `schema`: the columns read, as the table's schema has them (with column mapping metadata).
  TableScan(SnapshotPtr snapshot, const TypePtr& schema, std::vector<AddFile> files, bool row_tracking);

  SnapshotPtr snapshot_;
  TypePtr schema_;
  // The columns read as the table's schema has them: schema_'s plus the columns only the filter
  // reads, which are dropped after filtering.
  TypePtr read_schema_;
  std::optional<expr::BoundExpression> filter_;
  std::vector<int64_t> selection_;
  std::vector<AddFile> files_;
  bool row_tracking_;
  size_t next_file_ = 0;
  struct ReadColumns;
  std::shared_ptr<const ReadColumns> read_columns_;  // of read_schema_, made by the first file's read
  class FileReader;
  std::shared_ptr<FileReader> current_;
};

// The schema of what a scan of a table with `table_schema` returns (TableScan::schema() for every
// column): the table's columns without column mapping metadata. The same pointer when the table
// has none.
TypePtr ScannedSchema(const TypePtr& table_schema);

// A column of `rows` copies of one serialized partition value parsed as `type` (null for
// std::nullopt). DELTA_LOG_CORRUPT when the text is not a value of the type.
Result<ColumnPtr> PartitionValueColumn(const std::optional<std::string>& value, const TypePtr& type, int64_t rows);

}  // namespace sluice::delta
