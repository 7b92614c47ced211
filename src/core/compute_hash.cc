// HashRows: one 64-bit hash per row over the key columns, computed a column at a time. Values
// are hashed by their bits after normalizing the ones that compare equal but differ in bits
// (-0.0 and 0.0, the many NaNs); strings by a word-at-a-time multiply-xorshift hash. Nested
// columns hash their children first, then fold each row's element hashes in order.
//
// The constants are fixed so the hashes are the same in every process: they decide which writer
// a row goes to, and a restarted query must route rows as the previous run did.
#include <cmath>
#include <cstring>
#include <vector>

#include "sluice/core/compute.h"

namespace sluice {
namespace {

constexpr uint64_t kSeed = 0x243f6a8885a308d3ULL;
constexpr uint64_t kNullHash = 0x13198a2e03707344ULL;
constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ULL;

// The finalizer of MurmurHash3: every input bit affects every output bit.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Order-dependent: Combine(Combine(s, a), b) differs from Combine(Combine(s, b), a).
inline uint64_t Combine(uint64_t seed, uint64_t value) { return Mix((seed * kMultiplier) ^ value ^ (seed >> 29)); }

uint64_t HashBytes(std::string_view bytes) {
  const char* p = bytes.data();
  size_t size = bytes.size();
  uint64_t h = kSeed ^ (size * kMultiplier);
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = Combine(h, word);
    p += 8;
    size -= 8;
  }
  if (size > 0) {
    uint64_t tail = 0;
    std::memcpy(&tail, p, size);
    h = Combine(h, tail);
  }
  return Mix(h);
}

template <typename T>
uint64_t HashFixed(T value) {
  if constexpr (std::is_same_v<T, int128_t>) {
    return Combine(Mix(static_cast<uint64_t>(value)), static_cast<uint64_t>(value >> 64));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(value)) return Mix(0x7ff8000000000000ULL);
    double widened = value == 0 ? 0.0 : static_cast<double>(value);
    uint64_t bits;
    std::memcpy(&bits, &widened, 8);
    return Mix(bits);
  } else {
    return Mix(static_cast<uint64_t>(static_cast<int64_t>(value)));
  }
}

void HashColumn(const Column& column, std::vector<uint64_t>* out);

template <typename T>
void HashFixedColumn(const Column& column, uint64_t* out) {
  for (int64_t row = 0; row < column.length; ++row) out[row] = HashFixed(column.Value<T>(row));
}

// Folds the element hashes of each row's range [offsets[row], offsets[row + 1]).
void HashRanges(const Column& column, const std::vector<uint64_t>& element_hashes, uint64_t* out) {
  for (int64_t row = 0; row < column.length; ++row) {
    uint64_t h = Combine(kSeed, static_cast<uint64_t>(column.offsets[row + 1] - column.offsets[row]));
    for (int64_t e = column.offsets[row]; e < column.offsets[row + 1]; ++e) h = Combine(h, element_hashes[e]);
    out[row] = h;
  }
}

void HashColumn(const Column& column, std::vector<uint64_t>* out) {
  out->assign(column.length, 0);
  uint64_t* hashes = out->data();
  switch (column.type->id()) {
    case TypeId::kBoolean: HashFixedColumn<uint8_t>(column, hashes); break;
    case TypeId::kByte: HashFixedColumn<int8_t>(column, hashes); break;
    case TypeId::kShort: HashFixedColumn<int16_t>(column, hashes); break;
    case TypeId::kInteger:
    case TypeId::kDate: HashFixedColumn<int32_t>(column, hashes); break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: HashFixedColumn<int64_t>(column, hashes); break;
    case TypeId::kFloat: HashFixedColumn<float>(column, hashes); break;
    case TypeId::kDouble: HashFixedColumn<double>(column, hashes); break;
    case TypeId::kDecimal: HashFixedColumn<int128_t>(column, hashes); break;
    case TypeId::kString:
    case TypeId::kBinary:
      for (int64_t row = 0; row < column.length; ++row) hashes[row] = HashBytes(column.View(row));
      break;
    case TypeId::kStruct: {
      std::fill(out->begin(), out->end(), kSeed);
      std::vector<uint64_t> child_hashes;
      for (const ColumnPtr& child : column.children) {
        HashColumn(*child, &child_hashes);
        for (int64_t row = 0; row < column.length; ++row) hashes[row] = Combine(hashes[row], child_hashes[row]);
      }
      break;
    }
    case TypeId::kArray: {
      std::vector<uint64_t> element_hashes;
      HashColumn(*column.children[0], &element_hashes);
      HashRanges(column, element_hashes, hashes);
      break;
    }
    case TypeId::kMap: {
      std::vector<uint64_t> entry_hashes;
      std::vector<uint64_t> value_hashes;
      HashColumn(*column.children[0], &entry_hashes);
      HashColumn(*column.children[1], &value_hashes);
      for (size_t e = 0; e < entry_hashes.size(); ++e) entry_hashes[e] = Combine(entry_hashes[e], value_hashes[e]);
      HashRanges(column, entry_hashes, hashes);
      break;
    }
  }
  if (column.null_count > 0) {
    for (int64_t row = 0; row < column.length; ++row) {
      if (column.IsNull(row)) hashes[row] = kNullHash;
    }
  }
}

}  // namespace

std::vector<uint64_t> HashRows(const BatchPtr& batch, std::span<const int> key_columns) {
  std::vector<uint64_t> hashes(batch->num_rows(), kSeed);
  std::vector<uint64_t> column_hashes;
  for (int key : key_columns) {
    HashColumn(*batch->column(key), &column_hashes);
    for (int64_t row = 0; row < batch->num_rows(); ++row) hashes[row] = Combine(hashes[row], column_hashes[row]);
  }
  return hashes;
}

}  // namespace sluice
