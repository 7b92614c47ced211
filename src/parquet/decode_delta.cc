// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY.
//
// DELTA_BINARY_PACKED:
//   header  varint values per block (a multiple of 128), varint miniblocks per block (values per
//           miniblock a multiple of 32), varint total value count, zigzag varint first value
//   block   zigzag varint min delta, one bit-width byte per miniblock, the miniblocks (each
//           values-per-miniblock deltas minus min delta, bit-packed at its width)
// Values are rebuilt with wrapping arithmetic in the type's width, as writers compute them.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "parquet/decoding.h"

namespace sluice::parquet {
namespace {

int64_t ZigZagDecode(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

template <typename T>
class DeltaBinaryPackedDecoder final : public ValueDecoder {
  using U = std::make_unsigned_t<T>;

 public:
  Status Init(const uint8_t* data, int64_t size, int64_t max_values) {
    pos_ = data;
    end_ = data + size;
    uint64_t block_values, miniblocks, total, first;
    SLUICE_RETURN_IF_ERROR(ReadUleb128(&pos_, end_, &block_values));
    SLUICE_RETURN_IF_ERROR(ReadUleb128(&pos_, end_, &miniblocks));
    SLUICE_RETURN_IF_ERROR(ReadUleb128(&pos_, end_, &total));
    SLUICE_RETURN_IF_ERROR(ReadUleb128(&pos_, end_, &first));
    if (block_values == 0 || block_values % 128 != 0 || block_values > (1u << 20)) {
      return CorruptData("DELTA_BINARY_PACKED block size " + std::to_string(block_values) + " is not a multiple of 128");
    }
    if (miniblocks == 0 || block_values % miniblocks != 0 || (block_values / miniblocks) % 32 != 0) {
      return CorruptData("DELTA_BINARY_PACKED miniblock count " + std::to_string(miniblocks) + " does not divide its block");
    }
    if (total > static_cast<uint64_t>(max_values)) {
      return CorruptData("DELTA_BINARY_PACKED holds " + std::to_string(total) + " values, more than its page's " +
                         std::to_string(max_values));
    }
    miniblocks_per_block_ = static_cast<int64_t>(miniblocks);
    values_per_miniblock_ = static_cast<int64_t>(block_values / miniblocks);
    total_ = static_cast<int64_t>(total);
    remaining_ = total_;
    last_ = static_cast<U>(ZigZagDecode(first));
    miniblock_index_ = miniblocks_per_block_;
    return Status::OK();
  }

  int64_t total_values() const { return total_; }
  // The first byte after the values; meaningful once every value has been decoded.
  const uint8_t* position() const { return pos_; }

  Status Decode(int64_t count, T* out) {
    if (count > remaining_) return CorruptData("DELTA_BINARY_PACKED page holds fewer values than its header says");
    while (count > 0) {
      if (!first_served_) {
        first_served_ = true;
        *out++ = static_cast<T>(last_);
        --count;
        --remaining_;
        continue;
      }
      if (scratch_pos_ == scratch_len_) SLUICE_RETURN_IF_ERROR(NextMiniblock());
      const int64_t n = std::min(count, scratch_len_ - scratch_pos_);
      const uint64_t* deltas = scratch_.data() + scratch_pos_;
      U value = last_;
      for (int64_t i = 0; i < n; ++i) {
        value += min_delta_ + static_cast<U>(deltas[i]);
        out[i] = static_cast<T>(value);
      }
      last_ = value;
      scratch_pos_ += n;
      out += n;
      count -= n;
      remaining_ -= n;
    }
    return Status::OK();
  }

  Status DecodeFixed(int64_t count, uint8_t* out) override {
    T buffer[512];
    while (count > 0) {
      const int64_t n = std::min<int64_t>(count, 512);
      SLUICE_RETURN_IF_ERROR(Decode(n, buffer));
      std::memcpy(out, buffer, static_cast<size_t>(n) * sizeof(T));
      out += n * sizeof(T);
      count -= n;
    }
    return Status::OK();
  }

 private:
  Status NextMiniblock() {
    if (miniblock_index_ == miniblocks_per_block_) {
      uint64_t min_delta;
      SLUICE_RETURN_IF_ERROR(ReadUleb128(&pos_, end_, &min_delta));
      min_delta_ = static_cast<U>(ZigZagDecode(min_delta));
      if (end_ - pos_ < miniblocks_per_block_) return CorruptData("truncated DELTA_BINARY_PACKED block header");
      widths_ = pos_;
      pos_ += miniblocks_per_block_;
      miniblock_index_ = 0;
    }
    const int width = widths_[miniblock_index_++];
    if (width > static_cast<int>(8 * sizeof(T))) {
      return CorruptData("DELTA_BINARY_PACKED bit width " + std::to_string(width) + " wider than its type");
    }
    // The last miniblock is padded to its full size by writers; read only the values still owed.
    const int64_t values = std::min(values_per_miniblock_, remaining_);
    const int64_t needed = (values * width + 7) / 8;
    if (end_ - pos_ < needed) return CorruptData("truncated DELTA_BINARY_PACKED miniblock");
    if (static_cast<int64_t>(scratch_.size()) < values) scratch_.resize(static_cast<size_t>(values));
    UnpackBits64(pos_, width, values, scratch_.data());
    const int64_t full = values_per_miniblock_ * width / 8;
    pos_ += std::min<int64_t>(full, end_ - pos_);
    scratch_pos_ = 0;
    scratch_len_ = values;
    return Status::OK();
  }

  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  int64_t miniblocks_per_block_ = 0;
  int64_t values_per_miniblock_ = 0;
  int64_t total_ = 0;
  int64_t remaining_ = 0;
  bool first_served_ = false;
  U last_ = 0;
  U min_delta_ = 0;
  const uint8_t* widths_ = nullptr;
  int64_t miniblock_index_ = 0;
  std::vector<uint64_t> scratch_;
  int64_t scratch_pos_ = 0;
  int64_t scratch_len_ = 0;
};

// Byte array values given by a DELTA_BINARY_PACKED list of lengths followed by their bytes.
class LengthPrefixedValues {
 public:
  Status Init(const uint8_t* data, int64_t size, int64_t max_values) {
    DeltaBinaryPackedDecoder<int32_t> lengths;
    SLUICE_RETURN_IF_ERROR(lengths.Init(data, size, max_values));
    lengths_.resize(static_cast<size_t>(lengths.total_values()));
    SLUICE_RETURN_IF_ERROR(lengths.Decode(lengths.total_values(), lengths_.data()));
    pos_ = lengths.position();
    const uint8_t* end = data + size;
    int64_t total = 0;
    for (int32_t length : lengths_) {
      if (length < 0) return CorruptData("negative byte array length");
      total += length;
    }
    if (total > end - pos_) return CorruptData("byte array lengths exceed their page");
    return Status::OK();
  }

  int64_t size() const { return static_cast<int64_t>(lengths_.size()); }
  int64_t remaining() const { return size() - next_; }
  std::string_view Next() {
    std::string_view value(reinterpret_cast<const char*>(pos_), static_cast<size_t>(lengths_[next_++]));
    pos_ += value.size();
    return value;
  }
  // The total length of the next `count` values.
  int64_t BytesOfNext(int64_t count) const {
    int64_t total = 0;
    for (int64_t i = 0; i < count; ++i) total += lengths_[next_ + i];
    return total;
  }

 private:
  std::vector<int32_t> lengths_;
  const uint8_t* pos_ = nullptr;
  int64_t next_ = 0;
};

class DeltaLengthByteArrayDecoder final : public ValueDecoder {
 public:
  Status Init(const uint8_t* data, int64_t size, int64_t max_values) { return values_.Init(data, size, max_values); }

  Status DecodeByteArrays(int64_t count, std::vector<uint8_t>* bytes, std::vector<int64_t>* offsets) override {
    if (count > values_.remaining()) return CorruptData("DELTA_LENGTH_BYTE_ARRAY page holds fewer values than its header says");
    size_t out = bytes->size();
    bytes->resize(out + static_cast<size_t>(values_.BytesOfNext(count)));
    offsets->reserve(offsets->size() + static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      std::string_view value = values_.Next();
      if (!value.empty()) std::memcpy(bytes->data() + out, value.data(), value.size());
      out += value.size();
      offsets->push_back(static_cast<int64_t>(out));
    }
    return Status::OK();
  }

 private:
  LengthPrefixedValues values_;
};

class DeltaByteArrayDecoder final : public ValueDecoder {
 public:
  DeltaByteArrayDecoder(int fixed_width) : fixed_width_(fixed_width) {}

  Status Init(const uint8_t* data, int64_t size, int64_t max_values) {
    DeltaBinaryPackedDecoder<int32_t> prefixes;
    SLUICE_RETURN_IF_ERROR(prefixes.Init(data, size, max_values));
    prefixes_.resize(static_cast<size_t>(prefixes.total_values()));
    SLUICE_RETURN_IF_ERROR(prefixes.Decode(prefixes.total_values(), prefixes_.data()));
    const uint8_t* suffixes = prefixes.position();
    SLUICE_RETURN_IF_ERROR(suffixes_.Init(suffixes, data + size - suffixes, max_values));
    if (suffixes_.size() != static_cast<int64_t>(prefixes_.size())) {
      return CorruptData("DELTA_BYTE_ARRAY has " + std::to_string(prefixes_.size()) + " prefixes but " +
                         std::to_string(suffixes_.size()) + " suffixes");
    }
    return Status::OK();
  }

  Status DecodeByteArrays(int64_t count, std::vector<uint8_t>* bytes, std::vector<int64_t>* offsets) override {
    if (fixed_width_ != 0) return ValueDecoder::DecodeByteArrays(count, bytes, offsets);
    offsets->reserve(offsets->size() + static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      SLUICE_RETURN_IF_ERROR(NextValue());
      bytes->insert(bytes->end(), last_.begin(), last_.end());
      offsets->push_back(static_cast<int64_t>(bytes->size()));
    }
    return Status::OK();
  }

  Status DecodeFixed(int64_t count, uint8_t* out) override {
    if (fixed_width_ == 0) return ValueDecoder::DecodeFixed(count, out);
    for (int64_t i = 0; i < count; ++i) {
      SLUICE_RETURN_IF_ERROR(NextValue());
      if (static_cast<int64_t>(last_.size()) != fixed_width_) {
        return CorruptData("DELTA_BYTE_ARRAY value of " + std::to_string(last_.size()) + " bytes in a column of " +
                           std::to_string(fixed_width_) + "-byte values");
      }
      std::memcpy(out, last_.data(), last_.size());
      out += fixed_width_;
    }
    return Status::OK();
  }

 private:
  // Rebuilds the next value into last_ from the previous one's prefix and its suffix.
  Status NextValue() {
    if (suffixes_.remaining() == 0) return CorruptData("DELTA_BYTE_ARRAY page holds fewer values than its header says");
    const int32_t prefix = prefixes_[next_++];
    if (prefix < 0 || prefix > static_cast<int64_t>(last_.size())) {
      return CorruptData("DELTA_BYTE_ARRAY prefix length " + std::to_string(prefix) + " longer than the previous value");
    }
    std::string_view suffix = suffixes_.Next();
    last_.resize(static_cast<size_t>(prefix));
    last_.append(suffix);
    return Status::OK();
  }

  int fixed_width_;
  std::vector<int32_t> prefixes_;
  int64_t next_ = 0;
  LengthPrefixedValues suffixes_;
  std::string last_;
};

}  // namespace

Result<std::unique_ptr<ValueDecoder>> MakeDeltaBinaryPackedDecoder(const uint8_t* data, int64_t size, int value_width,
                                                                   int64_t max_values) {
  if (value_width == 4) {
    auto decoder = std::make_unique<DeltaBinaryPackedDecoder<int32_t>>();
    SLUICE_RETURN_IF_ERROR(decoder->Init(data, size, max_values));
    return std::unique_ptr<ValueDecoder>(std::move(decoder));
  }
  auto decoder = std::make_unique<DeltaBinaryPackedDecoder<int64_t>>();
  SLUICE_RETURN_IF_ERROR(decoder->Init(data, size, max_values));
  return std::unique_ptr<ValueDecoder>(std::move(decoder));
}

Result<std::unique_ptr<ValueDecoder>> MakeDeltaLengthByteArrayDecoder(const uint8_t* data, int64_t size,
                                                                      int64_t max_values) {
  auto decoder = std::make_unique<DeltaLengthByteArrayDecoder>();
  SLUICE_RETURN_IF_ERROR(decoder->Init(data, size, max_values));
  return std::unique_ptr<ValueDecoder>(std::move(decoder));
}

Result<std::unique_ptr<ValueDecoder>> MakeDeltaByteArrayDecoder(const uint8_t* data, int64_t size, int64_t max_values,
                                                                int fixed_width) {
  auto decoder = std::make_unique<DeltaByteArrayDecoder>(fixed_width);
  SLUICE_RETURN_IF_ERROR(decoder->Init(data, size, max_values));
  return std::unique_ptr<ValueDecoder>(std::move(decoder));
}

}  // namespace sluice::parquet
