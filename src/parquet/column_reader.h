// Reading one column chunk: its pages, their levels and values, converted to the sluice
// representation of the leaf's type.
//
// A ColumnChunkReader owns the chunk's bytes and walks its pages in order (dictionary page, then
// data pages v1 and v2, skipping index pages), decompressing each and decoding its levels in
// small batches, so that memory stays proportional to one page plus the rows asked for. Every
// size in a page header is checked against the chunk; corrupt data is PARQUET_CORRUPT_FILE and
// encodings, codecs or conversions sluice does not read are PARQUET_UNSUPPORTED_FEATURE. Not
// synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parquet/decoding.h"
#include "parquet/schema_conversion.h"
#include "sluice/parquet/metadata.h"

namespace sluice::parquet {

// The entries of one leaf column for a run of rows. An entry is one (definition level,
// repetition level) pair; entries whose definition level is the leaf's maximum carry a value.
struct LeafData {
  std::vector<int16_t> def_levels;  // one per entry; empty when the maximum is 0
  std::vector<int16_t> rep_levels;  // one per entry; empty when the maximum is 0
  int64_t num_entries = 0;
  // The values, dense and in the sluice layout of the leaf's type: fixed-width values back to
  // back in `data`, or string/binary bytes in `data` with num_values + 1 `offsets`.
  std::vector<uint8_t> data;
  std::vector<int64_t> offsets = {0};
  int64_t num_values = 0;
};

// How a leaf's physical values become values of its sluice type.
enum class Conversion : uint8_t {
  kCopy,             // same bytes: boolean, int32, int64 micros, float, double, byte arrays
  kInt32ToInt8,
  kInt32ToInt16,
  kInt32ToInt64,     // signed
  kUint32ToInt64,
  kInt32ToDecimal,
  kInt64ToDecimal,
  kUint64ToDecimal,
  kMillisToMicros,
  kNanosToMicros,
  kInt96ToMicros,
  kBytesToDecimal,   // big-endian two's complement, BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY
  kFixedToBinary,    // FIXED_LEN_BYTE_ARRAY read as binary or string
};

// Chooses the conversion for a leaf, or PARQUET_UNSUPPORTED_FEATURE.
Result<Conversion> ChooseConversion(const LeafColumn& leaf);

// Converts `count` physical values to the sluice layout and appends them to `out`. Fixed-width
// physical values lie back to back in `physical` (physical_width bytes each); byte arrays are
// given by `bytes` and count + 1 `offsets`. Decimals wider than 16 bytes are
// PARQUET_CORRUPT_FILE.
Status ConvertFixed(Conversion conversion, const uint8_t* physical, int physical_width, int64_t count, LeafData* out);
Status ConvertByteArrays(Conversion conversion, const uint8_t* bytes, const int64_t* offsets, int64_t count,
                         LeafData* out);

// Converts one PLAIN-encoded value (a statistics bound: byte arrays without their length
// prefix) into `out`, a fresh LeafData holding that single value.
Status ConvertStatisticsValue(const LeafColumn& leaf, std::string_view plain, LeafData* out);

class ColumnChunkReader {
 public:
  // `chunk` holds the chunk's bytes, from its first page to the end of its last.
  static Result<std::unique_ptr<ColumnChunkReader>> Make(const LeafColumn& leaf, const ColumnMetaData& metadata,
                                                         std::string chunk);

  // Appends the entries of the next `rows` rows to *out; *rows_read receives how many rows
  // there were (fewer than `rows` only at the end of the chunk).
  Status ReadRows(int64_t rows, LeafData* out, int64_t* rows_read);

 private:
  ColumnChunkReader(const LeafColumn& leaf, const ColumnMetaData& metadata, std::string chunk, Conversion conversion);

  // Moves to the next data page (reading any dictionary page on the way); *found is false at the
  // end of the chunk.
  Status NextDataPage(bool* found);
  Status ReadDictionaryPage(const PageHeader& header, std::string_view body);
  Status StartDataPageV1(const PageHeader& header, std::string_view body);
  Status StartDataPageV2(const PageHeader& header, std::string_view body);
  Status StartValues(Encoding encoding, const uint8_t* data, int64_t size, int64_t num_values);
  // Decompresses a page body into page_buffer_ and returns a view of it (or of `body` itself
  // when uncompressed).
  Result<std::string_view> Decompress(std::string_view body, int64_t uncompressed_size);
  // Decodes the next `count` non-null values of the current page into *out.
  Status DecodeValues(int64_t count, LeafData* out);
  // Buffers up to kLevelBatch levels of the current page for nested columns.
  Status BufferLevels();
  Status ReadFlatRows(int64_t rows, LeafData* out, int64_t* rows_read);
  Status ReadNestedRows(int64_t rows, LeafData* out, int64_t* rows_read);

  const LeafColumn& leaf_;
  Type physical_;
  int physical_width_;  // bytes per physical value (1 for booleans); 0 for BYTE_ARRAY
  int value_width_;     // bytes per sluice value; 0 for string and binary
  Conversion conversion_;
  CompressionCodec codec_;
  int16_t max_def_;
  int16_t max_rep_;

  std::string chunk_;
  size_t chunk_pos_ = 0;

  bool has_dictionary_ = false;
  LeafData dictionary_;

  std::string page_buffer_;
  std::string values_buffer_;
  int64_t page_entries_ = 0;  // entries of the current page not yet decoded
  RleBitPackedDecoder def_decoder_;
  RleBitPackedDecoder rep_decoder_;
  std::unique_ptr<ValueDecoder> values_;
  bool dictionary_encoded_ = false;

  // Nested columns: levels decoded ahead of the rows they belong to.
  std::vector<int16_t> def_buffer_;
  std::vector<int16_t> rep_buffer_;
  int64_t buffer_pos_ = 0;
  int64_t buffer_len_ = 0;
  bool first_entry_ = true;

  // Reused scratch space for conversions and dictionary indices.
  std::vector<uint8_t> scratch_;
  std::vector<int64_t> scratch_offsets_;
  std::vector<int32_t> indices_;
};

}  // namespace sluice::parquet
