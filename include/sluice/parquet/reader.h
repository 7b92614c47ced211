// ParquetReader: reads a Parquet file into sluice record batches.
//
// Open() reads and checks the footer ("PAR1" at both ends, the footer length within the file)
// and converts the schema (schema_conversion: legacy converted types, 2- and 3-level lists,
// maps, INT96 timestamps). Reading decodes only the column chunks of the requested columns, one
// row group at a time, in batches of at most ReadOptions::batch_size rows; memory stays within
// one projected column chunk per leaf plus the batch being built.
//
// Errors: PARQUET_CORRUPT_FILE when the bytes break the format (truncated file, bad magic,
// lengths past the file, corrupt pages); PARQUET_UNSUPPORTED_FEATURE for valid files using
// something sluice does not read (LZO/Brotli/LZ4 codecs, encrypted columns, exotic encodings);
// UNRESOLVED_COLUMN for a projection naming no column; IO_ERROR from the file.
//
// A ParquetReader is immutable after Open() and its const methods are thread-safe; a
// BatchReader is used by one thread at a time and must not outlive its ParquetReader.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/parquet/metadata.h"

namespace sluice::parquet {

struct ParquetSchema;

struct ReadOptions {
  // Columns to read: top-level names or dot paths into structs ("user.address.city"), matched
  // exactly first, then ignoring case. A path keeps only that field of its struct (the struct
  // is returned pruned to the requested fields). Empty reads every column. The result has the
  // requested top-level columns in the order first named.
  std::vector<std::string> columns;
  // Rows per batch; a row group yields ceil(rows / batch_size) batches.
  int64_t batch_size = 64 * 1024;
};

// The statistics of one leaf column chunk, decoded for pruning. min and max are one-row
// columns of the leaf's sluice type, or null when the file has no usable bounds (absent, or
// written in an order that is wrong for the type).
struct ColumnChunkStatistics {
  std::vector<std::string> path;  // path_in_schema
  std::optional<int64_t> null_count;
  int64_t num_values = 0;  // entries, nulls included
  ColumnPtr min;
  ColumnPtr max;
};

class BatchReader {
 public:
  virtual ~BatchReader() = default;
  // The next batch, or nullptr after the last one.
  virtual Result<BatchPtr> Next() = 0;
  // The schema of every batch (the projection of the file's schema).
  virtual const TypePtr& schema() const = 0;
};

class ParquetReader {
 public:
  static Result<std::unique_ptr<ParquetReader>> Open(std::unique_ptr<RandomAccessFile> file);
  static Result<std::unique_ptr<ParquetReader>> Open(FileSystem& fs, const std::string& path);
  ~ParquetReader();

  const FileMetaData& metadata() const { return metadata_; }
  // The file's columns as a sluice struct type.
  const TypePtr& schema() const;
  int64_t num_rows() const { return metadata_.num_rows; }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }
  // Decoded statistics of every leaf column chunk of a row group.
  Result<std::vector<ColumnChunkStatistics>> RowGroupStatistics(int row_group) const;

  // Batches of the given row groups (every row group when empty), in order.
  Result<std::unique_ptr<BatchReader>> NewBatchReader(const ReadOptions& options,
                                                      std::vector<int> row_groups = {}) const;
  // Every row of the file in one batch.
  Result<BatchPtr> ReadAll(const ReadOptions& options = {}) const;

 private:
  ParquetReader(std::unique_ptr<RandomAccessFile> file, FileMetaData metadata, std::unique_ptr<ParquetSchema> schema);

  std::unique_ptr<RandomAccessFile> file_;
  FileMetaData metadata_;
  std::unique_ptr<ParquetSchema> schema_;
  std::string path_;  // named in errors met while reading; empty when opened from a file alone
};

}  // namespace sluice::parquet
