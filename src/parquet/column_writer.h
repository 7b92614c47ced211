// Writing one leaf column: its pages within the current row group's column chunk, and its
// statistics for the chunk and the file.
//
// A ColumnWriter buffers the current row group's pages, encoded and compressed, and writes them
// (dictionary page first) when the row group is flushed. Its buffers keep their capacity across
// pages and row groups. Not synchronized.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/codec.h"
#include "parquet/encoding.h"
#include "parquet/schema_conversion.h"
#include "parquet/shred.h"
#include "sluice/core/file_system.h"
#include "sluice/parquet/metadata.h"
#include "sluice/parquet/writer.h"

namespace sluice::parquet {

class ColumnWriter {
 public:
  ColumnWriter(const LeafColumn& leaf, const WriterOptions& options);

  // Appends shredded entries: whole rows, as Shredder produces them.
  Status Append(const LeafEntries& entries);

  // Bytes this chunk would take if flushed now (pages so far, the open page and the dictionary).
  int64_t EstimatedSize() const;

  // Closes the open page and writes the chunk to `file` at its current position; fills `chunk`.
  // The writer is then ready for the next row group.
  Status FlushChunk(WritableFile* file, ColumnChunk* chunk);

  // The file-wide statistics so far.
  ColumnStats FileStatistics() const;

 private:
  // A running minimum and maximum in the order of the column's type.
  struct Bounds {
    bool present = false;
    int64_t min_int = 0, max_int = 0;        // boolean, INT32, INT64
    double min_float = 0, max_float = 0;      // FLOAT, DOUBLE
    int128_t min_dec = 0, max_dec = 0;        // FIXED_LEN_BYTE_ARRAY decimals
    std::string min_bytes, max_bytes;         // BYTE_ARRAY
  };

  Status AppendRange(const LeafEntries& entries, int64_t level_begin, int64_t level_end, int64_t value_begin,
                     int64_t value_end);
  void AppendValues(const Column& column, const int64_t* rows, int64_t count);
  // Before the chunk's first page is written: re-encodes the open page's values PLAIN and writes
  // the rest of the chunk PLAIN, without a dictionary.
  void DropDictionary();
  void EncodeFixed(const char* data, int64_t count);
  void EncodeByteArrays();
  void UpdateInts(Bounds* b, int64_t min, int64_t max) const;
  void UpdateFloats(Bounds* b, double min, double max) const;
  void UpdateDecimals(Bounds* b, int128_t min, int128_t max) const;
  void UpdateBytes(Bounds* b, std::string_view min, std::string_view max) const;
  void MergeInto(Bounds* into, const Bounds& from) const;
  int64_t PageValueBytes() const;
  Status FinishPage();
  // Compresses `body` (into *scratch, or not at all) as compressed_ and serializes its header
  // as header_.
  Status WritePage(std::string_view body, int64_t num_values, Encoding encoding, PageType type,
                   CompressionBuffer* scratch);
  Statistics ChunkStatistics() const;
  std::string EncodeBound(const Bounds& b, bool min) const;

  LeafColumn leaf_;
  WriterOptions options_;
  Type physical_;
  int width_ = 0;  // fixed physical width in bytes (FIXED_LEN_BYTE_ARRAY: type_length)
  bool use_dictionary_;

  // The open page.
  RleBitPackedEncoder def_encoder_;
  RleBitPackedEncoder rep_encoder_;
  int64_t page_levels_ = 0;
  int64_t page_values_ = 0;
  std::vector<uint32_t> page_indices_;  // dictionary mode
  std::string page_plain_;              // plain mode

  // The chunk.
  Dictionary dictionary_;
  bool dictionary_pages_ = false;  // some data page of this chunk is dictionary-encoded
  int32_t dictionary_page_count_ = 0;
  int32_t plain_page_count_ = 0;
  // A data page of the chunk: its header, and its compressed body in body[0, size). The buffers
  // are reused by the next row group's pages, and growing a chunk never copies the pages
  // already written.
  struct Page {
    std::string header;
    CompressionBuffer body;
    size_t size = 0;
  };
  std::vector<Page> pages_;
  size_t num_pages_ = 0;
  int64_t chunk_bytes_ = 0;  // the pages' total size
  int64_t chunk_levels_ = 0;
  int64_t chunk_uncompressed_ = 0;
  int64_t chunk_nulls_ = 0;
  Bounds chunk_bounds_;

  // The file.
  int64_t file_nulls_ = 0;
  Bounds file_bounds_;

  // Scratch buffers reused for every page.
  std::string body_;
  CompressionBuffer compression_scratch_;
  std::string_view compressed_;  // the last page compressed, in its scratch or body_
  std::string header_;
  std::string levels_;
  std::vector<uint8_t> bool_values_;  // the open page's booleans, packed when it closes
  std::vector<int32_t> int32_values_;
  std::vector<int64_t> int64_values_;
  std::vector<float> float_values_;
  std::vector<double> double_values_;
  std::string fixed_values_;
  std::vector<std::string_view> byte_array_values_;
  RleBitPackedEncoder index_encoder_;
};

}  // namespace sluice::parquet
