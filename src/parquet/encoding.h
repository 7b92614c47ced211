// Encoders for the value and level encodings the writer produces (the format's Encodings.md):
// the RLE/bit-packed hybrid, PLAIN, and dictionary encoding.
//
// Encoders append to caller-visible buffers that keep their capacity between pages, so a
// steady-state writer allocates nothing per value. Not synchronized.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::parquet {

// Appends `count` values of `bit_width` bits (0..64), least significant bit first, to *out.
// count * bit_width must be a multiple of 8 (the hybrid packs groups of 8 values).
void PackBits(const uint64_t* values, int64_t count, int bit_width, std::string* out);

// The number of bits needed for values 0..max_value.
int BitWidthFor(uint64_t max_value);

// The RLE/bit-packed hybrid: runs of 8 or more equal values become RLE runs, the rest is packed
// in groups of 8. bit_width is 0..64 (Parquet uses up to 32; wider widths are for tests).
class RleBitPackedEncoder {
 public:
  explicit RleBitPackedEncoder(int bit_width = 1) : bit_width_(bit_width) {}

  // Starts over with a new bit width, dropping anything not yet flushed.
  void Reset(int bit_width);

  void Put(uint64_t value) {
    if (value == current_value_ && repeat_count_ > 0) {
      ++repeat_count_;
      if (repeat_count_ > 8) return;  // the run goes on; the buffered values are already in it
    } else {
      if (repeat_count_ >= 8) FlushRepeatedRun();
      repeat_count_ = 1;
      current_value_ = value;
    }
    buffered_[num_buffered_++] = value;
    if (num_buffered_ == 8) FlushBufferedValues();
  }
  // Puts `count` copies of `value` (fast for long runs such as all-valid definition levels).
  void PutRepeated(uint64_t value, int64_t count);

  // Finishes the pending runs and appends the encoding to *out (no length prefix); the encoder
  // is then empty and keeps its bit width.
  void Flush(std::string* out);

 private:
  void FlushBufferedValues();
  void FlushRepeatedRun();
  void FlushLiteralRun(bool close);
  void StartLiteralRunIfNeeded();

  int bit_width_;
  std::string out_;  // runs finished so far
  uint64_t buffered_[8];
  int num_buffered_ = 0;
  uint64_t current_value_ = 0;
  int64_t repeat_count_ = 0;
  int64_t literal_count_ = 0;       // values in the open literal run (a multiple of 8)
  int64_t literal_indicator_ = -1;  // position in out_ of the open literal run's header byte
};

// PLAIN encodings of physical values.
inline void PlainAppend(const void* data, size_t size, std::string* out) {
  out->append(static_cast<const char*>(data), size);
}
inline void PlainAppendByteArray(std::string_view value, std::string* out) {
  auto length = static_cast<uint32_t>(value.size());
  char prefix[4];
  std::memcpy(prefix, &length, 4);
  out->append(prefix, 4);
  out->append(value);
}
// PLAIN booleans are bit-packed, one bit per value, least significant bit first.
void PlainAppendBooleans(const uint8_t* values, int64_t count, std::string* out);

// A dictionary of distinct values of one column chunk: fixed-width values compared by their
// bytes (so NaN payloads and -0.0 are kept apart, as PLAIN would keep them) or byte arrays.
// Values are stored once, contiguously; the hash table holds indices, so inserting a value
// allocates only when a buffer grows.
class Dictionary {
 public:
  // value_width > 0: fixed-width values of that many bytes; 0: byte arrays.
  explicit Dictionary(int value_width) : value_width_(value_width) {}

  // The index of `value`, inserting it if new.
  uint32_t IndexOf(std::string_view value);

  int32_t size() const { return static_cast<int32_t>(count_); }
  // Bytes of the dictionary page's PLAIN encoding.
  int64_t plain_size() const { return static_cast<int64_t>(bytes_.size()) + (value_width_ == 0 ? 4 * count_ : 0); }
  // Appends the PLAIN encoding of the values in index order.
  void WritePlain(std::string* out) const;
  std::string_view value(uint32_t index) const;
  void Clear();

 private:
  void Grow();

  int value_width_;
  int64_t count_ = 0;
  std::string bytes_;              // the values back to back
  std::vector<uint32_t> offsets_;  // byte arrays: count_ + 1 offsets into bytes_
  bool Equals(uint32_t index, std::string_view value) const;

  // Open addressing, linear probing. A slot holds the value's index + 1 in its low 32 bits (0:
  // empty) and the high 32 bits of its hash above, so that most mismatches are rejected without
  // touching the values.
  std::vector<uint64_t> slots_;
  std::vector<uint64_t> hashes_;  // per value, its hash (to rehash when the table grows)
};

uint64_t HashBytes(std::string_view bytes);

}  // namespace sluice::parquet
