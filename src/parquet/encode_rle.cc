// The RLE/bit-packed hybrid encoder and bit packing.
#include <algorithm>
#include <cstring>

#include "parquet/encoding.h"

namespace sluice::parquet {

namespace {

void AppendUleb128(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

}  // namespace

int BitWidthFor(uint64_t max_value) {
  int width = 0;
  while (width < 64 && (max_value >> width) != 0) ++width;
  return width;
}

void PackBits(const uint64_t* values, int64_t count, int bit_width, std::string* out) {
  if (bit_width == 0 || count == 0) return;
  size_t start = out->size();
  out->resize(start + static_cast<size_t>((count * bit_width + 7) / 8));
  auto* dst = reinterpret_cast<uint8_t*>(out->data()) + start;
  uint64_t mask = bit_width == 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
  // Accumulate into a 64-bit word and spill whole bytes; a value may straddle two words.
  uint64_t acc = 0;
  int acc_bits = 0;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t v = values[i] & mask;
    int remaining = bit_width;
    while (remaining > 0) {
      int take = std::min(remaining, 64 - acc_bits);
      uint64_t part = take == 64 ? v : v & ((uint64_t{1} << take) - 1);
      acc |= part << acc_bits;
      acc_bits += take;
      v = take == 64 ? 0 : v >> take;
      remaining -= take;
      if (acc_bits == 64) {
        std::memcpy(dst, &acc, 8);
        dst += 8;
        acc = 0;
        acc_bits = 0;
      }
    }
  }
  while (acc_bits > 0) {
    *dst++ = static_cast<uint8_t>(acc);
    acc >>= 8;
    acc_bits -= 8;
  }
}

void RleBitPackedEncoder::Reset(int bit_width) {
  bit_width_ = bit_width;
  out_.clear();
  num_buffered_ = 0;
  current_value_ = 0;
  repeat_count_ = 0;
  literal_count_ = 0;
  literal_indicator_ = -1;
}

void RleBitPackedEncoder::PutRepeated(uint64_t value, int64_t count) {
  // Fill the current group of 8 value by value; once the run is established (more than 8
  // equal values) the remaining copies only bump the count.
  while (count > 0 && !(value == current_value_ && repeat_count_ > 8)) {
    Put(value);
    --count;
  }
  repeat_count_ += count;
}

void RleBitPackedEncoder::FlushRepeatedRun() {
  AppendUleb128(static_cast<uint64_t>(repeat_count_) << 1, &out_);
  uint64_t v = current_value_;
  for (int i = 0; i < (bit_width_ + 7) / 8; ++i) {
    out_.push_back(static_cast<char>(v & 0xFF));
    v >>= 8;
  }
  num_buffered_ = 0;
  repeat_count_ = 0;
}

void RleBitPackedEncoder::StartLiteralRunIfNeeded() {
  if (literal_indicator_ < 0) {
    literal_indicator_ = static_cast<int64_t>(out_.size());
    out_.push_back(0);  // the run's header, filled in when the run closes
  }
}

void RleBitPackedEncoder::FlushLiteralRun(bool close) {
  StartLiteralRunIfNeeded();
  PackBits(buffered_, num_buffered_, bit_width_, &out_);
  num_buffered_ = 0;
  if (close) {
    // literal_count_ / 8 groups; at most 63 so that the header stays one byte.
    out_[literal_indicator_] = static_cast<char>(((literal_count_ / 8) << 1) | 1);
    literal_indicator_ = -1;
    literal_count_ = 0;
  }
}

void RleBitPackedEncoder::FlushBufferedValues() {
  if (repeat_count_ >= 8) {
    // The 8 buffered values all belong to the repeated run; close any literal run before it.
    num_buffered_ = 0;
    if (literal_count_ != 0) FlushLiteralRun(true);
    return;
  }
  literal_count_ += num_buffered_;
  FlushLiteralRun(literal_count_ / 8 >= 63);
  repeat_count_ = 0;
}

void RleBitPackedEncoder::Flush(std::string* out) {
  if (literal_count_ > 0 || repeat_count_ > 0 || num_buffered_ > 0) {
    bool all_repeat = literal_count_ == 0 && (repeat_count_ == num_buffered_ || num_buffered_ == 0);
    if (repeat_count_ > 0 && all_repeat) {
      FlushRepeatedRun();
    } else {
      // Pad the last group to 8 values with zeros; the reader knows how many values to take.
      while (num_buffered_ != 0 && num_buffered_ < 8) buffered_[num_buffered_++] = 0;
      literal_count_ += num_buffered_;
      FlushLiteralRun(true);
      repeat_count_ = 0;
    }
  }
  out->append(out_);
  out_.clear();
  num_buffered_ = 0;
  current_value_ = 0;
  repeat_count_ = 0;
  literal_count_ = 0;
  literal_indicator_ = -1;
}

void PlainAppendBooleans(const uint8_t* values, int64_t count, std::string* out) {
  size_t start = out->size();
  out->resize(start + static_cast<size_t>((count + 7) / 8), '\0');
  auto* dst = reinterpret_cast<uint8_t*>(out->data()) + start;
  for (int64_t i = 0; i < count; ++i) {
    if (values[i]) dst[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
  }
}

}  // namespace sluice::parquet
