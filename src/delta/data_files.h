// Data files of a Delta table: how rows become Parquet files in Hive-style partition
// directories, how their paths are written in `add.path`, and the statistics JSON of each file
// (PROTOCOL.md, "Per-file Statistics", "Partition Value Serialization"). Private to the delta
// layer; thread-safe functions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/delta/actions.h"
#include "sluice/parquet/writer.h"

namespace sluice::delta {

// The directory name of a partition value: Hive's escaping ('%XX' for '/', '=', ':', '%', '#',
// control characters and the like), `__HIVE_DEFAULT_PARTITION__` for null.
std::string PartitionDirectoryName(std::string_view column, const std::optional<std::string>& value);

// A relative file path as a URI path for `add.path` (RFC 2396: reserved and non-ASCII bytes
// percent-encoded, '/' kept), and back. Decoding fails with DELTA_LOG_CORRUPT on a bad escape.
std::string EncodeFilePath(std::string_view relative_path);
Result<std::string> DecodeFilePath(std::string_view uri_path);
// The absolute path of a data file `add.path` / `remove.path` names (decoded; relative to the
// table root unless absolute).
Result<std::string> DataFilePath(const std::string& table_path, std::string_view uri_path);

// Now, in milliseconds since the epoch: the time the log's actions carry.
int64_t NowMs();

// The protocol's string form of one partition value (numbers as Spark prints them, dates
// yyyy-MM-dd, timestamps ISO-8601 in UTC, timestamp_ntz "yyyy-MM-dd HH:mm:ss[.ffffff]");
// std::nullopt for null or for an empty string, which Delta reads as null.
std::optional<std::string> SerializePartitionValue(const Column& column, int64_t row);

// The `stats` JSON of a data file: numRecords, and minValues / maxValues / nullCount for the
// first `max_indexed_columns` leaf columns outside arrays and maps, nested like the schema.
// Strings are cut to 32 characters (a cut maximum is raised to stay an upper bound, or left out
// when it cannot be); timestamps are truncated down (minimum) or up (maximum) to milliseconds;
// binary, boolean and NaN-only columns get no bounds.
std::string StatsJson(const parquet::FileStats& stats, int max_indexed_columns = 32);

// The numRecords of a file's `stats` JSON; nullopt without stats or without the field.
std::optional<int64_t> StatsNumRecords(const std::optional<std::string>& stats);

// The remove action that deletes a live file, with the file's metadata kept for readers of the
// change history.
RemoveFile RemovalOf(const AddFile& file, int64_t now_ms);

// Writes rows of `table_schema` as data files of a table, batch by batch: one file per
// partition, Hive-style partitioned by the partition columns (which are not stored in the files).
// With column mapping (column_mapping.h) the files, their statistics and partition values use the
// physical names, and files go into random two-character folders instead of partition folders.
// Nothing is committed: a crash, an error or a writer destroyed before Finish leaves orphan files
// only. Used by one thread at a time.
class DataFileWriter {
 public:
  // `table_schema` is the table's schema with its column mapping metadata (the snapshot's, or what
  // Transaction::SetMetadata returned); `metadata` gives the partition columns and the mapping
  // mode. UNRESOLVED_COLUMN for a partition column not in the schema, INVALID_SCHEMA for a nested
  // one, DELTA_PROTOCOL_UNSUPPORTED for an unknown mapping mode. With `row_tracking` (rows a
  // rewrite copies on a table that tracks row ids), every batch has after the table's columns the
  // two row-tracking columns (long; null for a row that takes the new file's id or version), which
  // the files store as the metadata's materialized columns; INVALID_ARGUMENT when the metadata
  // names none.
  static Result<std::unique_ptr<DataFileWriter>> Open(FileSystem& fs, std::string table_path, TypePtr table_schema,
                                                      const Metadata& metadata, int64_t now_ms,
                                                      bool row_tracking = false);
  ~DataFileWriter();

  // Appends the batch's rows (of the table schema, with the row-tracking columns when opened with
  // them; field metadata may differ) to the files of their partitions.
  Status Write(const BatchPtr& batch);
  // Closes every file and returns the `add` actions describing them, ordered by partition
  // directory. The writer is then empty.
  Result<std::vector<AddFile>> Finish();

 private:
  struct OpenFile {
    std::string relative_path;
    PartitionValues partition_values;
    std::unique_ptr<parquet::ParquetWriter> writer;
  };
  DataFileWriter(FileSystem& fs, std::string table_path, TypePtr table_schema, int64_t now_ms);
  Result<OpenFile*> FileFor(const std::string& directory, PartitionValues values);

  FileSystem& fs_;
  std::string table_path_;
  TypePtr table_schema_;
  int64_t now_ms_;
  std::vector<int> partition_indices_;
  std::vector<std::string> partition_names_;  // the partition columns' physical names
  bool random_folders_ = false;
  std::vector<int> data_indices_;
  TypePtr data_schema_;
  std::map<std::string, OpenFile> files_;  // by partition directory ("" without partitioning)
};

}  // namespace sluice::delta
