// Data files of a Delta table: how rows become Parquet files in Hive-style partition
// directories, how their paths are written in `add.path`, and the statistics JSON of each file
// (PROTOCOL.md, "Per-file Statistics", "Partition Value Serialization"). Private to the delta
// layer; thread-safe functions.
#pragma once

#include <cstdint>
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

// Writes the rows of `batches` (all of `table_schema`) as data files of the table, one file per
// partition, Hive-style partitioned by `partition_columns` (which are not stored in the files),
// and returns the `add` actions describing them. Nothing is committed: a crash leaves orphan
// files only.
Result<std::vector<AddFile>> WriteDataFiles(FileSystem& fs, std::string_view table_path, const TypePtr& table_schema,
                                            const std::vector<std::string>& partition_columns,
                                            const std::vector<BatchPtr>& batches, int64_t now_ms);

}  // namespace sluice::delta
