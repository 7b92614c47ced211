// hash() is Spark's: Murmur3 x86 32-bit with seed 42, each argument hashed into the running
// seed, nulls skipped, with Spark's own treatment of the trailing bytes of strings (one
// mixing round per byte). xxhash64() is Spark's too: XXH64 with seed 42 over the same walk of
// the values. md5 and sha2 are OpenSSL's digests printed as lower-case hex. uuid(), rand() and
// randn() draw from these hashes too.
#include <cmath>
#include <cstring>

#include <openssl/evp.h>

#include <zlib.h>

#include "sluice/core/error_classes.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

constexpr uint32_t kSeed = 42;

uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
uint32_t MixK1(uint32_t k1) { return Rotl(k1 * 0xcc9e2d51u, 15) * 0x1b873593u; }
uint32_t MixH1(uint32_t h1, uint32_t k1) { return Rotl(h1 ^ k1, 13) * 5 + 0xe6546b64u; }
uint32_t Fmix(uint32_t h1, uint32_t length) {
  h1 ^= length;
  h1 ^= h1 >> 16;
  h1 *= 0x85ebca6bu;
  h1 ^= h1 >> 13;
  h1 *= 0xc2b2ae35u;
  h1 ^= h1 >> 16;
  return h1;
}
// Spark's Murmur3 hashing of ints, longs and bytes into a running 32-bit seed.
struct Murmur3 {
  using Seed = uint32_t;
  static Seed Int(uint32_t value, Seed seed) { return Fmix(MixH1(seed, MixK1(value)), 4); }
  static Seed Long(uint64_t value, Seed seed) {
    uint32_t h1 = MixH1(seed, MixK1(static_cast<uint32_t>(value)));
    h1 = MixH1(h1, MixK1(static_cast<uint32_t>(value >> 32)));
    return Fmix(h1, 8);
  }
  static Seed Bytes(std::string_view bytes, Seed seed) {
    size_t aligned = bytes.size() - bytes.size() % 4;
    uint32_t h1 = seed;
    for (size_t i = 0; i < aligned; i += 4) {
      uint32_t word;
      std::memcpy(&word, bytes.data() + i, 4);  // little-endian, as Spark reads it on x86
      h1 = MixH1(h1, MixK1(word));
    }
    for (size_t i = aligned; i < bytes.size(); ++i) {
      int32_t byte = static_cast<int8_t>(bytes[i]);  // Java bytes are signed
      h1 = MixH1(h1, MixK1(static_cast<uint32_t>(byte)));
    }
    return Fmix(h1, static_cast<uint32_t>(bytes.size()));
  }
};

// Spark's XXH64 (XXH64.java) of ints, longs and bytes into a running 64-bit seed.
struct XxHash64 {
  using Seed = uint64_t;
  static constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull, kPrime2 = 0xC2B2AE3D27D4EB4Full,
                            kPrime3 = 0x165667B19E3779F9ull, kPrime4 = 0x85EBCA77C2B2AE63ull,
                            kPrime5 = 0x27D4EB2F165667C5ull;
  static uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t Fmix(uint64_t h) {
    h ^= h >> 33;
    h *= kPrime2;
    h ^= h >> 29;
    h *= kPrime3;
    h ^= h >> 32;
    return h;
  }
  static uint64_t Word(std::string_view bytes, size_t at) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + at, 8);
    return word;
  }
  static uint64_t Round(uint64_t acc, uint64_t input) { return Rotl(acc + input * kPrime2, 31) * kPrime1; }
  static Seed Int(uint32_t value, Seed seed) {
    uint64_t h = seed + kPrime5 + 4;
    h ^= static_cast<uint64_t>(value) * kPrime1;
    return Fmix(Rotl(h, 23) * kPrime2 + kPrime3);
  }
  static Seed Long(uint64_t value, Seed seed) {
    uint64_t h = seed + kPrime5 + 8;
    h ^= Rotl(value * kPrime2, 31) * kPrime1;
    return Fmix(Rotl(h, 27) * kPrime1 + kPrime4);
  }
  static Seed Bytes(std::string_view bytes, Seed seed) {
    const size_t length = bytes.size();
    size_t at = 0;
    uint64_t h;
    if (length >= 32) {
      uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
      for (; at + 32 <= length; at += 32) {
        v1 = Round(v1, Word(bytes, at));
        v2 = Round(v2, Word(bytes, at + 8));
        v3 = Round(v3, Word(bytes, at + 16));
        v4 = Round(v4, Word(bytes, at + 24));
      }
      h = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
      for (uint64_t v : {v1, v2, v3, v4}) h = (h ^ Round(0, v)) * kPrime1 + kPrime4;
    } else {
      h = seed + kPrime5;
    }
    h += length;
    for (; at + 8 <= length; at += 8) h = Rotl(h ^ Round(0, Word(bytes, at)), 27) * kPrime1 + kPrime4;
    if (at + 4 <= length) {
      uint32_t word;
      std::memcpy(&word, bytes.data() + at, 4);
      h = Rotl(h ^ (static_cast<uint64_t>(word) * kPrime1), 23) * kPrime2 + kPrime3;
      at += 4;
    }
    for (; at < length; ++at) h = Rotl(h ^ (static_cast<uint64_t>(static_cast<uint8_t>(bytes[at])) * kPrime5), 11) * kPrime1;
    return Fmix(h);
  }
};

__extension__ typedef unsigned __int128 uint128_t;

// Java's BigInteger.toByteArray(): minimal big-endian two's complement.
std::string BigIntegerBytes(int128_t value) {
  std::string bytes;
  for (int i = 15; i >= 0; --i) bytes += static_cast<char>(static_cast<uint8_t>(static_cast<uint128_t>(value) >> (8 * i)));
  size_t start = 0;
  while (start + 1 < bytes.size()) {
    uint8_t b = static_cast<uint8_t>(bytes[start]);
    uint8_t next = static_cast<uint8_t>(bytes[start + 1]);
    if ((b == 0x00 && !(next & 0x80)) || (b == 0xFF && (next & 0x80))) ++start;
    else break;
  }
  return bytes.substr(start);
}

template <typename H>
typename H::Seed HashValue(const Column& c, int64_t row, typename H::Seed seed) {
  if (c.IsNull(row)) return seed;
  switch (c.type->id()) {
    case TypeId::kBoolean: return H::Int(c.Value<uint8_t>(row) ? 1 : 0, seed);
    case TypeId::kByte: return H::Int(static_cast<uint32_t>(static_cast<int32_t>(c.Value<int8_t>(row))), seed);
    case TypeId::kShort: return H::Int(static_cast<uint32_t>(static_cast<int32_t>(c.Value<int16_t>(row))), seed);
    case TypeId::kInteger:
    case TypeId::kDate: return H::Int(static_cast<uint32_t>(c.Value<int32_t>(row)), seed);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return H::Long(static_cast<uint64_t>(c.Value<int64_t>(row)), seed);
    case TypeId::kFloat: {
      float f = c.Value<float>(row);
      if (f == 0.0f) return H::Int(0, seed);
      uint32_t bits;
      if (std::isnan(f)) {
        bits = 0x7fc00000u;
      } else {
        std::memcpy(&bits, &f, 4);
      }
      return H::Int(bits, seed);
    }
    case TypeId::kDouble: {
      double d = c.Value<double>(row);
      if (d == 0.0) return H::Long(0, seed);
      uint64_t bits;
      if (std::isnan(d)) {
        bits = 0x7ff8000000000000ull;
      } else {
        std::memcpy(&bits, &d, 8);
      }
      return H::Long(bits, seed);
    }
    case TypeId::kDecimal: {
      int128_t v = c.Value<int128_t>(row);
      if (c.type->precision() <= 18) return H::Long(static_cast<uint64_t>(static_cast<int64_t>(v)), seed);
      return H::Bytes(BigIntegerBytes(v), seed);
    }
    case TypeId::kString:
    case TypeId::kBinary: return H::Bytes(c.View(row), seed);
    case TypeId::kStruct:
      for (const ColumnPtr& child : c.children) seed = HashValue<H>(*child, row, seed);
      return seed;
    case TypeId::kArray:
      for (int64_t e = c.offsets[static_cast<size_t>(row)]; e < c.offsets[static_cast<size_t>(row) + 1]; ++e) {
        seed = HashValue<H>(*c.children[0], e, seed);
      }
      return seed;
    default: return seed;
  }
}

// Each row's arguments hashed in order into the running seed, starting from 42.
template <typename H, typename Out>
Datum HashRows(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  auto out = NewFixedColumn(node.type, rows);
  Out* values = reinterpret_cast<Out*>(out->data.data());
  for (int64_t i = 0; i < rows; ++i) {
    typename H::Seed h = kSeed;
    for (const Datum& d : args) h = HashValue<H>(*d.column, d.scalar ? 0 : i, h);
    values[i] = static_cast<Out>(h);
  }
  return Datum{out, false};
}

Result<Datum> Digest(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  StringReader input = ReadString(args[0]);
  ValidityReader valid = ReadValidity(args[0]);
  bool sha2 = node.op == Op::kSha2;
  FixedReader<int32_t> bits = sha2 ? ReadFixed<int32_t>(args[1]) : FixedReader<int32_t>{nullptr, 0};
  ValidityReader valid_bits = sha2 ? ReadValidity(args[1]) : ValidityReader{nullptr, 0};
  StringWriter writer(node.type, rows);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx == nullptr) return Status::Error(errors::kInternalError, "cannot allocate a digest context");
  unsigned char digest[EVP_MAX_MD_SIZE];
  char hex[2 * EVP_MAX_MD_SIZE];
  static constexpr char kHex[] = "0123456789abcdef";
  for (int64_t i = 0; i < rows; ++i) {
    if (!valid(i) || !valid_bits(i)) {
      writer.AppendNull();
      continue;
    }
    const EVP_MD* md = EVP_md5();
    if (sha2) {
      switch (bits[i]) {
        case 224: md = EVP_sha224(); break;
        case 0:
        case 256: md = EVP_sha256(); break;
        case 384: md = EVP_sha384(); break;
        case 512: md = EVP_sha512(); break;
        default: md = nullptr;
      }
    }
    unsigned int length = 0;
    std::string_view v = input[i];
    if (md == nullptr || EVP_DigestInit_ex(ctx, md, nullptr) != 1 || EVP_DigestUpdate(ctx, v.data(), v.size()) != 1 ||
        EVP_DigestFinal_ex(ctx, digest, &length) != 1) {
      writer.AppendNull();
      continue;
    }
    for (unsigned int b = 0; b < length; ++b) {
      hex[2 * b] = kHex[digest[b] >> 4];
      hex[2 * b + 1] = kHex[digest[b] & 15];
    }
    writer.Append(std::string_view(hex, 2 * length));
  }
  EVP_MD_CTX_free(ctx);
  return Datum{writer.Finish(), false};
}

}  // namespace

namespace {

// Spark's random numbers: its XORShiftRandom (a xorshift generator seeded by Murmur3 of the
// seed's 8 big-endian bytes, as a Scala MurmurHash3.bytesHash) under java.util.Random's
// nextDouble and nextGaussian, so that rand(seed) and randn(seed) give Spark's values.
class SparkRandom {
 public:
  explicit SparkRandom(int64_t seed) {
    // The bytes ByteBuffer.putLong writes, read as Murmur3's little-endian words.
    const uint64_t bytes = __builtin_bswap64(static_cast<uint64_t>(seed));
    constexpr uint32_t kArraySeed = 0x3c074a61;
    const uint32_t low = Murmur3::Long(bytes, kArraySeed);
    const uint32_t high = Murmur3::Long(bytes, low);
    state_ = (static_cast<uint64_t>(high) << 32) | low;
  }

  double NextDouble() {
    const int64_t high = Next(26), low = Next(27);
    return static_cast<double>((high << 27) + low) * 0x1.0p-53;
  }

  // The polar method, each second value kept for the next call, as java.util.Random has it.
  double NextGaussian() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double v1, v2, s;
    do {
      v1 = 2 * NextDouble() - 1;
      v2 = 2 * NextDouble() - 1;
      s = v1 * v1 + v2 * v2;
    } while (s >= 1 || s == 0);
    const double multiplier = std::sqrt(-2 * std::log(s) / s);
    spare_ = v2 * multiplier;
    has_spare_ = true;
    return v1 * multiplier;
  }

 private:
  int64_t Next(int bits) {
    state_ ^= state_ << 21;
    state_ ^= state_ >> 35;
    state_ ^= state_ << 4;
    return static_cast<int64_t>(state_ & ((uint64_t{1} << bits) - 1));
  }

  uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// The seed of a call that draws anew each batch (uuid(), an unseeded rand()): the batch's time and
// the call's place in the text, so a replayed batch draws the same values.
uint64_t BatchSeed(const BoundNode& node, const EvalInput& input) {
  return XxHash64::Long(static_cast<uint64_t>(input.now_micros), static_cast<uint64_t>(node.slot));
}

}  // namespace

// Row n of a batch gets the generator's n-th value, as Spark gives the n-th row of a partition.
// The generator steps forward to each row's number; a number behind it, or too far ahead (the
// mixed numbers of a lambda's elements), gets the first value of a generator seeded by it.
Result<Datum> EvalRandom(const BoundNode& node, const EvalInput& input) {
  const int64_t seed = node.args.empty() ? static_cast<int64_t>(BatchSeed(node, input))
                                         : node.args[0]->constant->Value<int64_t>(0);
  const bool gaussian = node.op == Op::kRandn;
  constexpr int64_t kMaxSteps = int64_t{1} << 26;
  auto out = NewFixedColumn(node.type, input.num_rows);
  double* values = reinterpret_cast<double*>(out->data.data());
  SparkRandom random(seed);
  int64_t next = 0;  // the number of the value `random` gives next
  for (int64_t i = 0; i < input.num_rows; ++i) {
    const int64_t number = RowNumber(input, i);
    if (number < next || number - next > kMaxSteps) {
      SparkRandom own(static_cast<int64_t>(XxHash64::Long(static_cast<uint64_t>(number), static_cast<uint64_t>(seed))));
      values[i] = gaussian ? own.NextGaussian() : own.NextDouble();
      continue;
    }
    for (; next < number; ++next) gaussian ? random.NextGaussian() : random.NextDouble();
    values[i] = gaussian ? random.NextGaussian() : random.NextDouble();
    ++next;
  }
  return Datum{out, false};
}

Result<Datum> EvalUuid(const BoundNode& node, const EvalInput& input) {
  StringWriter writer(node.type, input.num_rows);
  const uint64_t seed = BatchSeed(node, input);
  static constexpr char kHex[] = "0123456789abcdef";
  char text[36];
  for (int64_t i = 0; i < input.num_rows; ++i) {
    const uint64_t row = static_cast<uint64_t>(RowNumber(input, i));
    uint64_t high = XxHash64::Long(row, seed), low = XxHash64::Long(row, ~seed);
    high = (high & ~0xF000ull) | 0x4000ull;                       // version 4
    low = (low & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;  // the RFC 4122 variant
    int at = 0;
    for (int nibble = 0; nibble < 32; ++nibble) {
      if (nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20) text[at++] = '-';
      const uint64_t word = nibble < 16 ? high : low;
      text[at++] = kHex[(word >> (60 - 4 * (nibble % 16))) & 0xF];
    }
    writer.Append(std::string_view(text, 36));
  }
  return Datum{writer.Finish(), false};
}

Result<Datum> EvalHashFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  if (node.op == Op::kCrc32) {
    StringReader input = ReadString(args[0]);
    return FixedKernel<int64_t>(node, args, rows, [&](int64_t i, int64_t* out) -> Result<bool> {
      const std::string_view bytes = input[i];
      *out = static_cast<int64_t>(
          crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
      return true;
    });
  }
  if (node.op == Op::kXxHash64) return HashRows<XxHash64, int64_t>(node, args, rows);
  if (node.op != Op::kHash) return Digest(node, args, rows);
  return HashRows<Murmur3, int32_t>(node, args, rows);
}

}  // namespace sluice::expr
