// PLAIN: fixed-width values back to back, booleans bit-packed, byte arrays length-prefixed.
#include <cstring>

#include "parquet/decoding.h"

namespace sluice::parquet {
namespace {

class PlainFixedDecoder final : public ValueDecoder {
 public:
  PlainFixedDecoder(const uint8_t* data, int64_t size, int width) : pos_(data), end_(data + size), width_(width) {}

  Status DecodeFixed(int64_t count, uint8_t* out) override {
    if (width_ <= 0) return CorruptData("fixed-width values of width " + std::to_string(width_));
    if (count > (end_ - pos_) / width_) return CorruptData("PLAIN page holds fewer values than its header says");
    const size_t bytes = static_cast<size_t>(count) * width_;
    if (bytes > 0) std::memcpy(out, pos_, bytes);
    pos_ += bytes;
    return Status::OK();
  }

 private:
  const uint8_t* pos_;
  const uint8_t* end_;
  int width_;
};

class PlainBooleanDecoder final : public ValueDecoder {
 public:
  PlainBooleanDecoder(const uint8_t* data, int64_t size) : data_(data), bits_(size * 8) {}

  Status DecodeFixed(int64_t count, uint8_t* out) override {
    if (count > bits_ - bit_) return CorruptData("PLAIN boolean page holds fewer values than its header says");
    for (int64_t i = 0; i < count; ++i, ++bit_) out[i] = (data_[bit_ >> 3] >> (bit_ & 7)) & 1;
    return Status::OK();
  }

 private:
  const uint8_t* data_;
  int64_t bits_;
  int64_t bit_ = 0;
};

class PlainByteArrayDecoder final : public ValueDecoder {
 public:
  PlainByteArrayDecoder(const uint8_t* data, int64_t size) : pos_(data), end_(data + size) {}

  Status DecodeByteArrays(int64_t count, std::vector<uint8_t>* bytes, std::vector<int64_t>* offsets) override {
    // First pass: check every length and total the bytes, so the copy needs one allocation.
    const uint8_t* p = pos_;
    int64_t total = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (end_ - p < 4) return CorruptData("PLAIN byte array page holds fewer values than its header says");
      uint32_t length;
      std::memcpy(&length, p, 4);
      p += 4;
      if (length > static_cast<uint64_t>(end_ - p)) return CorruptData("byte array value longer than its page");
      p += length;
      total += length;
    }
    size_t out = bytes->size();
    bytes->resize(out + static_cast<size_t>(total));
    offsets->reserve(offsets->size() + static_cast<size_t>(count));
    uint8_t* dst = bytes->data();
    for (int64_t i = 0; i < count; ++i) {
      uint32_t length;
      std::memcpy(&length, pos_, 4);
      pos_ += 4;
      if (length > 0) std::memcpy(dst + out, pos_, length);
      pos_ += length;
      out += length;
      offsets->push_back(static_cast<int64_t>(out));
    }
    return Status::OK();
  }

 private:
  const uint8_t* pos_;
  const uint8_t* end_;
};

}  // namespace

std::unique_ptr<ValueDecoder> MakePlainFixedDecoder(const uint8_t* data, int64_t size, int value_width) {
  return std::make_unique<PlainFixedDecoder>(data, size, value_width);
}

std::unique_ptr<ValueDecoder> MakePlainBooleanDecoder(const uint8_t* data, int64_t size) {
  return std::make_unique<PlainBooleanDecoder>(data, size);
}

std::unique_ptr<ValueDecoder> MakePlainByteArrayDecoder(const uint8_t* data, int64_t size) {
  return std::make_unique<PlainByteArrayDecoder>(data, size);
}

}  // namespace sluice::parquet
