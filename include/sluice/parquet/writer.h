// ParquetWriter: writes sluice RecordBatches as one Parquet file.
//
// The writer streams to a WritableFile: it writes "PAR1" at Open, each row group's column chunks
// when the row group reaches its target size, and the footer once at Close. It holds at most one
// row group (encoded and compressed) in memory. Every sluice type is written, nested types
// included; the type mapping, encodings and options are in docs/parquet.md.
//
// Errors: Write fails with INVALID_ARGUMENT when a batch's schema is not the writer's, or when a
// field declared non-nullable holds a null; IO_ERROR from the file. After any error the writer
// is unusable (further calls return the first error) and the file is never published.
// A ParquetWriter is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/parquet/metadata.h"

namespace sluice::parquet {

struct WriterOptions {
  // UNCOMPRESSED, SNAPPY, GZIP or ZSTD.
  CompressionCodec compression = CompressionCodec::kSnappy;
  int zstd_level = 3;  // 1..22
  // A row group is closed once its encoded, compressed size reaches this many bytes, or once it
  // holds max_row_group_rows rows (as Arrow's writer does by default: several row groups let
  // readers split a large file, and the writer reuses one row group's buffers for the next).
  int64_t row_group_size = int64_t{128} << 20;
  int64_t max_row_group_rows = int64_t{1} << 20;
  // A data page is closed once its encoded, uncompressed values reach this many bytes. Pages end
  // on row boundaries, so a page holding one very large row may be larger.
  int64_t page_size = int64_t{1} << 20;
  // Dictionary-encode every column but booleans. A column chunk whose first 16384 values are at
  // least 90% distinct is written PLAIN without a dictionary; one whose dictionary grows past
  // dictionary_size_limit bytes (its PLAIN size) writes the rest of its pages PLAIN.
  bool dictionary = true;
  int64_t dictionary_size_limit = int64_t{1} << 20;
  // The footer's key-value metadata, in this order.
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
};

// A minimum or maximum value of a leaf column, in the sluice representation of its type
// (ColumnStats::type): one of the members is meaningful.
struct StatValue {
  // boolean (0 or 1), byte, short, integer, long, date (days), timestamp and timestamp_ntz
  // (microseconds).
  int64_t int_value = 0;
  double float_value = 0;       // float and double (never NaN)
  int128_t decimal_value = 0;   // decimal: the unscaled value
  std::string bytes;            // string (UTF-8) and binary
};

// The statistics of one leaf column over the whole file.
struct ColumnStats {
  // The Parquet path_in_schema: for columns inside structs only, exactly the sluice field path
  // ("user", "email"); inside arrays and maps it also names the Parquet list/map levels.
  std::vector<std::string> path;
  TypePtr type;
  // Inside an array or a map: min, max and null_count then count elements, not rows.
  bool in_repeated = false;
  // Entries whose leaf value is null (because the leaf or an enclosing struct is null).
  int64_t null_count = 0;
  // Absent when every value is null (or NaN), or for types without an order (boolean has one).
  std::optional<StatValue> min;
  std::optional<StatValue> max;
};

struct FileStats {
  int64_t num_rows = 0;
  int64_t file_size = 0;  // bytes, footer included
  std::vector<ColumnStats> columns;  // one per leaf column, in schema order
};

class ParquetWriter {
 public:
  // Starts a file with `schema` (a struct type). INVALID_ARGUMENT for bad options,
  // PARQUET_UNSUPPORTED_FEATURE for a schema Parquet cannot represent (an empty struct).
  static Result<std::unique_ptr<ParquetWriter>> Open(std::unique_ptr<WritableFile> file, TypePtr schema,
                                                     WriterOptions options = {});
  ~ParquetWriter();
  ParquetWriter(const ParquetWriter&) = delete;
  ParquetWriter& operator=(const ParquetWriter&) = delete;

  // Appends the batch's rows. Its schema must equal the writer's (field metadata aside).
  Status Write(const RecordBatch& batch);

  // Rows written so far.
  int64_t num_rows() const;

  // Writes the last row group and the footer, and closes (publishes) the file.
  Result<FileStats> Close();

 private:
  class Impl;
  explicit ParquetWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::parquet
