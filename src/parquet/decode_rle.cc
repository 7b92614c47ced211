// The RLE/bit-packed hybrid: levels, RLE booleans and dictionary indices.
//
//   runs             <run>*
//   run              <bit-packed-run> | <rle-run>
//   bit-packed-run   varint(groups << 1 | 1), groups * bit_width bytes (8 values per group)
//   rle-run          varint(count << 1), the value in ceil(bit_width / 8) little-endian bytes
#include <algorithm>
#include <cstring>

#include "parquet/decoding.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {

RleBitPackedDecoder::RleBitPackedDecoder(const uint8_t* data, int64_t size, int bit_width)
    : data_(data), pos_(data), end_(data + size), bit_width_(bit_width) {}

Status RleBitPackedDecoder::NextRun() {
  uint64_t header;
  SLUICE_RETURN_IF_ERROR(ReadUleb128(&pos_, end_, &header));
  if (header & 1) {
    const uint64_t groups = header >> 1;
    const int64_t available = end_ - pos_;
    // Writers pad the last run's final group; some stop the bytes early. Serve the values whose
    // bits are present and no more.
    const int64_t bytes_needed = bit_width_ == 0 ? 0 : static_cast<int64_t>(std::min<uint64_t>(groups, 1ull << 40)) * bit_width_;
    const int64_t bytes = std::min(bytes_needed, available);
    int64_t values = bit_width_ == 0 ? static_cast<int64_t>(std::min<uint64_t>(groups, 1ull << 40)) * 8
                                     : bytes * 8 / bit_width_;
    if (values == 0) return CorruptData("empty bit-packed run");
    is_rle_ = false;
    packed_ = pos_;
    packed_index_ = 0;
    run_remaining_ = values;
    pos_ += bytes;
  } else {
    const uint64_t count = header >> 1;
    if (count == 0) return CorruptData("RLE run of length 0");
    const int value_bytes = (bit_width_ + 7) / 8;
    if (end_ - pos_ < value_bytes) return CorruptData("truncated RLE run value");
    uint32_t value = 0;
    std::memcpy(&value, pos_, static_cast<size_t>(value_bytes));
    pos_ += value_bytes;
    if (bit_width_ < 32 && (value >> bit_width_) != 0) return CorruptData("RLE run value wider than its bit width");
    is_rle_ = true;
    rle_value_ = value;
    run_remaining_ = static_cast<int64_t>(std::min<uint64_t>(count, 1ull << 62));
  }
  return Status::OK();
}

template <typename T>
Status RleBitPackedDecoder::Decode(int64_t count, T* out) {
  uint32_t buffer[256];
  while (count > 0) {
    if (run_remaining_ == 0) {
      if (pos_ >= end_) return CorruptData("RLE/bit-packed data ends before all values were read");
      SLUICE_RETURN_IF_ERROR(NextRun());
    }
    const int64_t n = std::min(count, run_remaining_);
    if (is_rle_) {
      std::fill(out, out + n, static_cast<T>(rle_value_));
    } else {
      // Unpack from the run's current value: skip whole bytes only when aligned.
      int64_t done = 0;
      while (done < n) {
        const int64_t index = packed_index_ + done;
        const int64_t group_start = index / 8 * 8;
        const int64_t skip = index - group_start;
        const int64_t chunk = std::min<int64_t>(n - done + skip, 256);
        const int64_t bits_available = run_remaining_ + packed_index_ - group_start;
        const int64_t unpack = std::min(chunk, bits_available);
        UnpackBits32(packed_ + group_start * bit_width_ / 8, bit_width_, unpack, buffer);
        for (int64_t i = skip; i < unpack; ++i) out[done + i - skip] = static_cast<T>(buffer[i]);
        done += unpack - skip;
      }
      packed_index_ += n;
    }
    run_remaining_ -= n;
    out += n;
    count -= n;
  }
  return Status::OK();
}

template Status RleBitPackedDecoder::Decode<uint8_t>(int64_t, uint8_t*);
template Status RleBitPackedDecoder::Decode<int16_t>(int64_t, int16_t*);
template Status RleBitPackedDecoder::Decode<int32_t>(int64_t, int32_t*);
template Status RleBitPackedDecoder::Decode<uint32_t>(int64_t, uint32_t*);

int LevelBitWidth(int16_t max_level) {
  int width = 0;
  while ((1 << width) <= max_level) ++width;
  return width;
}

namespace {

uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

Status OpenLevelsV1(const uint8_t** pos, const uint8_t* end, int16_t max_level, RleBitPackedDecoder* decoder) {
  if (end - *pos < 4) return CorruptData("truncated level section length");
  const uint32_t length = LoadLe32(*pos);
  *pos += 4;
  if (length > static_cast<uint64_t>(end - *pos)) return CorruptData("level section longer than its page");
  *decoder = RleBitPackedDecoder(*pos, length, LevelBitWidth(max_level));
  *pos += length;
  return Status::OK();
}

namespace {

class RleBooleanDecoder final : public ValueDecoder {
 public:
  RleBooleanDecoder(const uint8_t* data, int64_t size) : decoder_(data, size, 1) {}
  Status DecodeFixed(int64_t count, uint8_t* out) override { return decoder_.Decode(count, out); }

 private:
  RleBitPackedDecoder decoder_;
};

class DictionaryIndexDecoder final : public ValueDecoder {
 public:
  DictionaryIndexDecoder(const uint8_t* data, int64_t size, int bit_width) : decoder_(data, size, bit_width) {}
  Status DecodeIndices(int64_t count, int32_t* out) override { return decoder_.Decode(count, out); }

 private:
  RleBitPackedDecoder decoder_;
};

}  // namespace

Result<std::unique_ptr<ValueDecoder>> MakeRleBooleanDecoder(const uint8_t* data, int64_t size) {
  if (size < 4) return CorruptData("truncated RLE boolean length");
  const uint32_t length = LoadLe32(data);
  if (length > static_cast<uint64_t>(size - 4)) return CorruptData("RLE boolean data longer than its page");
  return std::unique_ptr<ValueDecoder>(new RleBooleanDecoder(data + 4, length));
}

Result<std::unique_ptr<ValueDecoder>> MakeDictionaryIndexDecoder(const uint8_t* data, int64_t size) {
  if (size < 1) return CorruptData("dictionary-encoded page without its bit width byte");
  const int bit_width = data[0];
  if (bit_width > 32) return CorruptData("dictionary index bit width " + std::to_string(bit_width) + " above 32");
  return std::unique_ptr<ValueDecoder>(new DictionaryIndexDecoder(data + 1, size - 1, bit_width));
}

Status ValueDecoder::DecodeFixed(int64_t, uint8_t*) {
  return Status::Error(errors::kInternalError, "this encoding does not produce fixed-width values");
}

Status ValueDecoder::DecodeByteArrays(int64_t, std::vector<uint8_t>*, std::vector<int64_t>*) {
  return Status::Error(errors::kInternalError, "this encoding does not produce byte arrays");
}

Status ValueDecoder::DecodeIndices(int64_t, int32_t*) {
  return Status::Error(errors::kInternalError, "this encoding does not produce dictionary indices");
}

}  // namespace sluice::parquet
