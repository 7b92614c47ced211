// Parquet file metadata: the structures of apache/parquet-format's parquet.thrift that sluice
// reads and writes, with their Thrift compact serialization.
//
// Field names follow parquet.thrift (snake_case); optional Thrift fields are std::optional (or
// an empty vector for optional lists). Enum values are the Thrift values; a value this version
// does not know (from a newer writer) is kept as its number. Fields and union members this
// version does not model (page indexes, bloom filters, encryption, size statistics, geospatial
// statistics, newer logical types) are skipped when parsing and never written.
//
// Parse functions check every length against the input and fail with PARQUET_CORRUPT_FILE,
// naming the structure and field that is wrong; they never read outside the given bytes. All
// functions here are thread-safe (they share no state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::parquet {

// Physical types.
enum class Type : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

// Legacy annotations, superseded by LogicalType but still written next to it for old readers.
enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class FieldRepetitionType : int32_t {
  kRequired = 0,
  kOptional = 1,
  kRepeated = 2,
};

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

enum class TimeUnit : uint8_t { kMillis, kMicros, kNanos };

// The LogicalType union. kind says which member is set; the other fields belong to one kind.
struct LogicalType {
  enum class Kind : uint8_t {
    kString,     // 1
    kMap,        // 2
    kList,       // 3
    kEnum,       // 4
    kDecimal,    // 5: scale, precision
    kDate,       // 6
    kTime,       // 7: is_adjusted_to_utc, unit
    kTimestamp,  // 8: is_adjusted_to_utc, unit
    kInteger,    // 10: bit_width, is_signed
    kNull,       // 11 (parquet.thrift calls it UNKNOWN: always-null column)
    kJson,       // 12
    kBson,       // 13
    kUuid,       // 14
    kFloat16,    // 15
    kOther,      // a member this version does not model (read only; never written)
  };

  Kind kind = Kind::kString;
  int32_t scale = 0;
  int32_t precision = 0;
  bool is_adjusted_to_utc = false;
  TimeUnit unit = TimeUnit::kMicros;
  int8_t bit_width = 0;
  bool is_signed = true;

  static LogicalType Of(Kind kind) {
    LogicalType t;
    t.kind = kind;
    return t;
  }
  static LogicalType Decimal(int32_t precision, int32_t scale) {
    LogicalType t = Of(Kind::kDecimal);
    t.precision = precision;
    t.scale = scale;
    return t;
  }
  static LogicalType Timestamp(bool is_adjusted_to_utc, TimeUnit unit) {
    LogicalType t = Of(Kind::kTimestamp);
    t.is_adjusted_to_utc = is_adjusted_to_utc;
    t.unit = unit;
    return t;
  }
  static LogicalType Integer(int8_t bit_width, bool is_signed) {
    LogicalType t = Of(Kind::kInteger);
    t.bit_width = bit_width;
    t.is_signed = is_signed;
    return t;
  }
  bool operator==(const LogicalType&) const = default;
};

struct Statistics {
  // Deprecated fields, ordered by signed comparison; written only where that order is right.
  std::optional<std::string> max;
  std::optional<std::string> min;
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  // Bounds in the column's ColumnOrder, PLAIN-encoded (byte arrays without a length prefix).
  std::optional<std::string> max_value;
  std::optional<std::string> min_value;
  std::optional<bool> is_max_value_exact;
  std::optional<bool> is_min_value_exact;
  std::optional<int64_t> nan_count;
  bool operator==(const Statistics&) const = default;
};

struct SchemaElement {
  std::optional<Type> type;  // leaves only
  std::optional<int32_t> type_length;
  std::optional<FieldRepetitionType> repetition_type;  // absent on the root
  std::string name;
  std::optional<int32_t> num_children;  // groups only
  std::optional<ConvertedType> converted_type;
  std::optional<int32_t> scale;
  std::optional<int32_t> precision;
  std::optional<int32_t> field_id;
  std::optional<LogicalType> logical_type;
  bool operator==(const SchemaElement&) const = default;
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const KeyValue&) const = default;
};

struct PageEncodingStats {
  PageType page_type = PageType::kDataPage;
  Encoding encoding = Encoding::kPlain;
  int32_t count = 0;
  bool operator==(const PageEncodingStats&) const = default;
};

struct ColumnMetaData {
  Type type = Type::kBoolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;  // pages including their headers
  int64_t total_compressed_size = 0;    // pages including their headers
  std::vector<KeyValue> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
  std::vector<PageEncodingStats> encoding_stats;
  std::optional<int64_t> bloom_filter_offset;
  std::optional<int32_t> bloom_filter_length;
  bool operator==(const ColumnMetaData&) const = default;
};

struct ColumnChunk {
  std::optional<std::string> file_path;
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;  // always written; absent only in odd files
  std::optional<int64_t> offset_index_offset;
  std::optional<int32_t> offset_index_length;
  std::optional<int64_t> column_index_offset;
  std::optional<int32_t> column_index_length;
  bool has_crypto_metadata = false;  // the chunk is encrypted (read only; sluice cannot decrypt)
  bool operator==(const ColumnChunk&) const = default;
};

struct SortingColumn {
  int32_t column_idx = 0;
  bool descending = false;
  bool nulls_first = false;
  bool operator==(const SortingColumn&) const = default;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;  // uncompressed
  int64_t num_rows = 0;
  std::vector<SortingColumn> sorting_columns;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;
  bool operator==(const RowGroup&) const = default;
};

// The ColumnOrder union (one per leaf column).
enum class ColumnOrder : uint8_t {
  kTypeDefinedOrder,
  kIeee754TotalOrder,
  kInt96TimestampOrder,
  kUnknown,  // a member this version does not know: ignore the column's min_value/max_value
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;  // depth-first; schema[0] is the root
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  std::vector<ColumnOrder> column_orders;  // one per leaf, or empty
  bool has_encryption_algorithm = false;   // read only: footer of a plaintext-footer encrypted file
  bool operator==(const FileMetaData&) const = default;
};

struct DataPageHeader {
  int32_t num_values = 0;  // including nulls
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;
  bool operator==(const DataPageHeader&) const = default;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;
  bool operator==(const DictionaryPageHeader&) const = default;
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  std::optional<Statistics> statistics;
  bool operator==(const DataPageHeaderV2&) const = default;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;  // excluding this header
  int32_t compressed_page_size = 0;    // excluding this header
  std::optional<int32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;
  bool operator==(const PageHeader&) const = default;
};

// Appends the compact-protocol encoding to *out.
void SerializeFileMetaData(const FileMetaData& metadata, std::string* out);
void SerializePageHeader(const PageHeader& header, std::string* out);

// Parses a footer (the bytes between the last page and the 4-byte length + "PAR1" trailer).
// Checks the structure only: how the schema, row groups and column chunks fit together is the
// reader's to check. Required fields that are missing are errors.
Result<FileMetaData> ParseFileMetaData(std::string_view bytes);

// Parses the page header at the start of `bytes` (which may continue with the page and more);
// *header_size receives the number of bytes the header took.
Result<PageHeader> ParsePageHeader(std::string_view bytes, size_t* header_size);

// Names as parquet.thrift spells them ("INT64", "RLE_DICTIONARY", "SNAPPY", ...); an unknown
// value prints as its number.
std::string TypeName(Type type);
std::string ConvertedTypeName(ConvertedType type);
std::string EncodingName(Encoding encoding);
std::string CodecName(CompressionCodec codec);
std::string PageTypeName(PageType type);
std::string RepetitionName(FieldRepetitionType repetition);
// "STRING", "DECIMAL(10,2)", "TIMESTAMP(MICROS,true)", "INTEGER(8,true)", ...
std::string LogicalTypeToString(const LogicalType& type);

}  // namespace sluice::parquet
