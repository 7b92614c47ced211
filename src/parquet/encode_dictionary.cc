// The dictionary of distinct values behind RLE_DICTIONARY pages.
#include <algorithm>
#include <cstring>

#include "parquet/encoding.h"

namespace sluice::parquet {

namespace {

constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

uint64_t HashBytes(std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = n * kMul;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * kMul;
  }
  return Mix(h);
}

namespace {

uint64_t Load64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

uint32_t Load32(const char* p) {
  uint32_t word;
  std::memcpy(&word, p, 4);
  return word;
}

// Byte arrays of one size: those of 4 to 16 bytes (most dictionary strings) as two overlapping
// words each, without a call to memcmp.
bool SameBytes(const char* a, const char* b, size_t size) {
  if (size >= 8 && size <= 16) {
    return Load64(a) == Load64(b) && Load64(a + size - 8) == Load64(b + size - 8);
  }
  if (size >= 4 && size < 8) return Load32(a) == Load32(b) && Load32(a + size - 4) == Load32(b + size - 4);
  return std::memcmp(a, b, size) == 0;
}

}  // namespace

bool Dictionary::Equals(uint32_t index, std::string_view value) const {
  // Constant sizes let the compiler compare the common widths inline.
  switch (value_width_) {
    case 4: return std::memcmp(bytes_.data() + size_t{index} * 4, value.data(), 4) == 0;
    case 8: return std::memcmp(bytes_.data() + size_t{index} * 8, value.data(), 8) == 0;
    case 0: {  // byte arrays: by their offsets
      const uint32_t begin = offsets_[index];
      const size_t size = offsets_[index + 1] - begin;
      return size == value.size() && SameBytes(bytes_.data() + begin, value.data(), size);
    }
    default:  // other fixed widths (FIXED_LEN_BYTE_ARRAY decimals): no offsets are kept
      return SameBytes(bytes_.data() + size_t{index} * value_width_, value.data(), value_width_);
  }
}

uint32_t Dictionary::IndexOf(std::string_view value) {
  if ((count_ + 1) * 2 > static_cast<int64_t>(slots_.size())) Grow();
  uint64_t hash = HashBytes(value);
  uint64_t tag = hash & 0xFFFFFFFF00000000ull;
  size_t mask = slots_.size() - 1;
  size_t slot = hash & mask;
  while (true) {
    uint64_t entry = slots_[slot];
    if (entry == 0) break;
    if ((entry & 0xFFFFFFFF00000000ull) == tag) {
      auto index = static_cast<uint32_t>(entry) - 1;
      if (Equals(index, value)) return index;
    }
    slot = (slot + 1) & mask;
  }
  auto index = static_cast<uint32_t>(count_++);
  slots_[slot] = tag | (uint64_t{index} + 1);
  hashes_.push_back(hash);
  bytes_.append(value);
  if (value_width_ == 0) {
    if (offsets_.empty()) offsets_.push_back(0);
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  }
  return index;
}

std::string_view Dictionary::value(uint32_t index) const {
  if (value_width_ > 0) return std::string_view(bytes_).substr(size_t{index} * value_width_, value_width_);
  return std::string_view(bytes_).substr(offsets_[index], offsets_[index + 1] - offsets_[index]);
}

void Dictionary::Grow() {
  size_t capacity = slots_.empty() ? 1024 : slots_.size() * 2;
  slots_.assign(capacity, 0);
  size_t mask = capacity - 1;
  for (int64_t i = 0; i < count_; ++i) {
    size_t slot = hashes_[i] & mask;
    while (slots_[slot] != 0) slot = (slot + 1) & mask;
    slots_[slot] = (hashes_[i] & 0xFFFFFFFF00000000ull) | static_cast<uint64_t>(i + 1);
  }
}

void Dictionary::WritePlain(std::string* out) const {
  if (value_width_ > 0) {
    out->append(bytes_);
    return;
  }
  for (int64_t i = 0; i < count_; ++i) PlainAppendByteArray(value(static_cast<uint32_t>(i)), out);
}

void Dictionary::Clear() {
  count_ = 0;
  bytes_.clear();
  offsets_.clear();
  hashes_.clear();
  if (!slots_.empty()) std::fill(slots_.begin(), slots_.end(), 0);
}

}  // namespace sluice::parquet
