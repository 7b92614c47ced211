// Bit unpacking, varints and the shared error helper of the decoders.
//
// Values are unpacked eight at a time (eight values of width W occupy exactly W bytes), by a
// function specialized for each width so that the shifts and masks are constants. Each value is
// extracted from an unaligned 64-bit load; groups close to the end of the input go through a
// zero-padded copy so that no load reads past it.
#include <array>
#include <bit>
#include <cstring>
#include <utility>

#include "parquet/decoding.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {

static_assert(std::endian::native == std::endian::little, "the decoders assume a little-endian host");

Status CorruptData(std::string message) { return Status::Error(errors::kParquetCorruptFile, std::move(message)); }

Status ReadUleb128(const uint8_t** pos, const uint8_t* end, uint64_t* value) {
  uint64_t result = 0;
  const uint8_t* p = *pos;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= end) return CorruptData("truncated varint");
    uint8_t byte = *p++;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *pos = p;
      *value = result;
      return Status::OK();
    }
  }
  return CorruptData("varint longer than 10 bytes");
}

namespace {

template <typename T, int W>
inline void UnpackGroup(const uint8_t* in, T* out) {
  if constexpr (W == 0) {
    for (int i = 0; i < 8; ++i) out[i] = 0;
  } else {
    constexpr uint64_t kMask = W == 64 ? ~uint64_t{0} : (uint64_t{1} << W) - 1;
    for (int i = 0; i < 8; ++i) {
      const int bit = i * W;
      const int byte = bit / 8;
      const int shift = bit % 8;
      uint64_t word;
      std::memcpy(&word, in + byte, 8);
      uint64_t v = word >> shift;
      if (shift + W > 64) v |= static_cast<uint64_t>(in[byte + 8]) << (64 - shift);
      out[i] = static_cast<T>(v & kMask);
    }
  }
}

// Unpacks `groups` groups of eight values. Loads may touch up to 9 bytes past a group's start
// byte, so the caller passes only groups that end at least 9 bytes before the input's end.
template <typename T, int W>
void UnpackGroups(const uint8_t* in, int64_t groups, T* out) {
  for (int64_t g = 0; g < groups; ++g) {
    UnpackGroup<T, W>(in, out);
    in += W;
    out += 8;
  }
}

template <typename T>
using GroupsFn = void (*)(const uint8_t*, int64_t, T*);

template <typename T, int... W>
constexpr auto MakeTable(std::integer_sequence<int, W...>) {
  return std::array<GroupsFn<T>, sizeof...(W)>{&UnpackGroups<T, W>...};
}

constexpr auto kUnpack32 = MakeTable<uint32_t>(std::make_integer_sequence<int, 33>{});
constexpr auto kUnpack64 = MakeTable<uint64_t>(std::make_integer_sequence<int, 65>{});

template <typename T, size_t N>
void Unpack(const std::array<GroupsFn<T>, N>& table, const uint8_t* in, int bit_width, int64_t count, T* out) {
  GroupsFn<T> fn = table[bit_width];
  const int64_t total_bytes = (count * bit_width + 7) / 8;
  const int64_t full_groups = count / 8;
  // Groups whose loads stay inside the input: a group starting at byte b loads up to b + W + 9.
  int64_t safe_groups = bit_width == 0 ? full_groups : (total_bytes - 9) / bit_width;
  if (safe_groups < 0) safe_groups = 0;
  if (safe_groups > full_groups) safe_groups = full_groups;
  fn(in, safe_groups, out);
  int64_t done = safe_groups * 8;
  const uint8_t* p = in + safe_groups * bit_width;
  // The rest, one group at a time through a padded copy (the last group may be partial).
  uint8_t padded[64 + 16];
  T values[8];
  while (done < count) {
    const int64_t available = total_bytes - (p - in);
    const int64_t take = available < bit_width ? available : bit_width;
    std::memset(padded, 0, sizeof(padded));
    std::memcpy(padded, p, static_cast<size_t>(take));
    fn(padded, 1, values);
    const int64_t n = count - done < 8 ? count - done : 8;
    std::memcpy(out + done, values, static_cast<size_t>(n) * sizeof(T));
    done += n;
    p += bit_width;
  }
}

}  // namespace

void UnpackBits32(const uint8_t* in, int bit_width, int64_t count, uint32_t* out) {
  Unpack(kUnpack32, in, bit_width, count, out);
}

void UnpackBits64(const uint8_t* in, int bit_width, int64_t count, uint64_t* out) {
  Unpack(kUnpack64, in, bit_width, count, out);
}

}  // namespace sluice::parquet
