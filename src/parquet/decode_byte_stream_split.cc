// BYTE_STREAM_SPLIT: byte k of value i is at k * N + i, for N values of W bytes.
#include <cstring>

#include "parquet/decoding.h"

namespace sluice::parquet {
namespace {

class ByteStreamSplitDecoder final : public ValueDecoder {
 public:
  ByteStreamSplitDecoder(const uint8_t* data, int64_t values, int width) : data_(data), values_(values), width_(width) {}

  Status DecodeFixed(int64_t count, uint8_t* out) override {
    if (count > values_ - next_) return CorruptData("BYTE_STREAM_SPLIT page holds fewer values than its header says");
    for (int k = 0; k < width_; ++k) {
      const uint8_t* stream = data_ + k * values_ + next_;
      for (int64_t i = 0; i < count; ++i) out[i * width_ + k] = stream[i];
    }
    next_ += count;
    return Status::OK();
  }

 private:
  const uint8_t* data_;
  int64_t values_;
  int width_;
  int64_t next_ = 0;
};

}  // namespace

Result<std::unique_ptr<ValueDecoder>> MakeByteStreamSplitDecoder(const uint8_t* data, int64_t size, int value_width) {
  if (value_width <= 0 || size % value_width != 0) {
    return CorruptData("BYTE_STREAM_SPLIT data of " + std::to_string(size) + " bytes is not a whole number of " +
                       std::to_string(value_width) + "-byte values");
  }
  return std::unique_ptr<ValueDecoder>(new ByteStreamSplitDecoder(data, size / value_width, value_width));
}

}  // namespace sluice::parquet
