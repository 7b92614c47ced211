// Decoders for the value and level encodings of Parquet data pages (the Encodings.md of the
// Parquet format specification).
//
// Every decoder reads from a caller-owned byte range that must outlive it, checks every length,
// count and bit width against that range, and fails with PARQUET_CORRUPT_FILE instead of reading
// past its end. Decoders write into caller-provided buffers in batches; none allocates per value,
// and no allocation is sized by a count read from the input before that count has been checked
// against the bytes or values the caller said to expect. Decoders are not synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::parquet {

// A PARQUET_CORRUPT_FILE status with `message`.
Status CorruptData(std::string message);

// Unpacks `count` values of `bit_width` bits, packed least significant bit first (the order of
// the RLE/bit-packed hybrid and of DELTA_BINARY_PACKED miniblocks). `in` must hold
// ceil(count * bit_width / 8) bytes; nothing past them is read. bit_width is 0..32 for the
// 32-bit form and 0..64 for the 64-bit form.
void UnpackBits32(const uint8_t* in, int bit_width, int64_t count, uint32_t* out);
void UnpackBits64(const uint8_t* in, int bit_width, int64_t count, uint64_t* out);

// An unsigned LEB128 varint at *pos (before end); advances *pos past it.
Status ReadUleb128(const uint8_t** pos, const uint8_t* end, uint64_t* value);

// The RLE/bit-packed hybrid encoding of definition and repetition levels, booleans (RLE value
// encoding) and dictionary indices, without any length prefix. bit_width is 0..32.
class RleBitPackedDecoder {
 public:
  RleBitPackedDecoder() = default;
  RleBitPackedDecoder(const uint8_t* data, int64_t size, int bit_width);

  // Decodes the next `count` values into out[0..count). PARQUET_CORRUPT_FILE when the runs end
  // before `count` values or a run is malformed. T is uint8_t, int16_t, int32_t or uint32_t;
  // values must fit in T (callers pick T by bit width).
  template <typename T>
  Status Decode(int64_t count, T* out);

  // Bytes read so far (the end of the last run started).
  int64_t bytes_consumed() const { return pos_ - data_; }

 private:
  Status NextRun();

  const uint8_t* data_ = nullptr;
  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  int bit_width_ = 0;
  // The current run: an RLE run repeats rle_value_; a bit-packed run reads from packed_.
  bool is_rle_ = true;
  int64_t run_remaining_ = 0;
  uint32_t rle_value_ = 0;
  const uint8_t* packed_ = nullptr;
  int64_t packed_index_ = 0;  // values of the bit-packed run consumed so far
};

// Opens the level section of a data page v1 at *pos: a 4-byte little-endian length, then the
// RLE/bit-packed hybrid at the width of max_level. Advances *pos past the section.
Status OpenLevelsV1(const uint8_t** pos, const uint8_t* end, int16_t max_level, RleBitPackedDecoder* decoder);
// The bit width that holds levels 0..max_level.
int LevelBitWidth(int16_t max_level);

// One data page's values in one encoding. A decoder serves the values in order, over any number
// of calls; each call states how many values it wants and fails if the page has fewer.
//   DecodeFixed       fixed-width physical types: boolean (one byte per value, 0 or 1), INT32,
//                     INT64, FLOAT, DOUBLE (their little-endian bytes), INT96 (12 bytes) and
//                     FIXED_LEN_BYTE_ARRAY (type_length bytes); writes count * width bytes.
//   DecodeByteArrays  BYTE_ARRAY: appends the values' bytes to *bytes and one end offset per value
//                     to *offsets (whose last element must already be bytes->size()).
//   DecodeIndices     dictionary-encoded pages: the dictionary indices (unchecked; the caller
//                     checks them against its dictionary size).
// A call the encoding cannot serve (e.g. DecodeIndices on a PLAIN page) is INTERNAL_ERROR.
class ValueDecoder {
 public:
  virtual ~ValueDecoder() = default;
  virtual Status DecodeFixed(int64_t count, uint8_t* out);
  virtual Status DecodeByteArrays(int64_t count, std::vector<uint8_t>* bytes, std::vector<int64_t>* offsets);
  virtual Status DecodeIndices(int64_t count, int32_t* out);
};

// PLAIN for fixed-width types other than boolean: value_width bytes per value.
std::unique_ptr<ValueDecoder> MakePlainFixedDecoder(const uint8_t* data, int64_t size, int value_width);
// PLAIN booleans: bit-packed, least significant bit first.
std::unique_ptr<ValueDecoder> MakePlainBooleanDecoder(const uint8_t* data, int64_t size);
// PLAIN BYTE_ARRAY: each value a 4-byte little-endian length and its bytes.
std::unique_ptr<ValueDecoder> MakePlainByteArrayDecoder(const uint8_t* data, int64_t size);
// RLE booleans: a 4-byte little-endian length, then the hybrid encoding with bit width 1.
Result<std::unique_ptr<ValueDecoder>> MakeRleBooleanDecoder(const uint8_t* data, int64_t size);
// PLAIN_DICTIONARY / RLE_DICTIONARY data: one byte of bit width (0..32), then the hybrid.
Result<std::unique_ptr<ValueDecoder>> MakeDictionaryIndexDecoder(const uint8_t* data, int64_t size);
// DELTA_BINARY_PACKED for INT32 (value_width 4) or INT64 (8). The header's value count must not
// exceed max_values (the page's value count), which bounds every allocation.
Result<std::unique_ptr<ValueDecoder>> MakeDeltaBinaryPackedDecoder(const uint8_t* data, int64_t size,
                                                                   int value_width, int64_t max_values);
// DELTA_LENGTH_BYTE_ARRAY (BYTE_ARRAY).
Result<std::unique_ptr<ValueDecoder>> MakeDeltaLengthByteArrayDecoder(const uint8_t* data, int64_t size,
                                                                      int64_t max_values);
// DELTA_BYTE_ARRAY for BYTE_ARRAY (fixed_width 0) or FIXED_LEN_BYTE_ARRAY (fixed_width =
// type_length; every value must have that length and is served by DecodeFixed).
Result<std::unique_ptr<ValueDecoder>> MakeDeltaByteArrayDecoder(const uint8_t* data, int64_t size,
                                                                int64_t max_values, int fixed_width);
// BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY: value_width byte
// streams of size / value_width bytes each. The size must be a multiple of value_width.
Result<std::unique_ptr<ValueDecoder>> MakeByteStreamSplitDecoder(const uint8_t* data, int64_t size,
                                                                 int value_width);

}  // namespace sluice::parquet
