// hash() is Spark's: Murmur3 x86 32-bit with seed 42, each argument hashed into the running
// seed, nulls skipped, with Spark's own treatment of the trailing bytes of strings (one
// mixing round per byte). md5 and sha2 are OpenSSL's digests printed as lower-case hex.
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
uint32_t HashInt(uint32_t value, uint32_t seed) { return Fmix(MixH1(seed, MixK1(value)), 4); }
uint32_t HashLong(uint64_t value, uint32_t seed) {
  uint32_t h1 = MixH1(seed, MixK1(static_cast<uint32_t>(value)));
  h1 = MixH1(h1, MixK1(static_cast<uint32_t>(value >> 32)));
  return Fmix(h1, 8);
}
uint32_t HashBytes(std::string_view bytes, uint32_t seed) {
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

uint32_t HashValue(const Column& c, int64_t row, uint32_t seed) {
  if (c.IsNull(row)) return seed;
  switch (c.type->id()) {
    case TypeId::kBoolean: return HashInt(c.Value<uint8_t>(row) ? 1 : 0, seed);
    case TypeId::kByte: return HashInt(static_cast<uint32_t>(static_cast<int32_t>(c.Value<int8_t>(row))), seed);
    case TypeId::kShort: return HashInt(static_cast<uint32_t>(static_cast<int32_t>(c.Value<int16_t>(row))), seed);
    case TypeId::kInteger:
    case TypeId::kDate: return HashInt(static_cast<uint32_t>(c.Value<int32_t>(row)), seed);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return HashLong(static_cast<uint64_t>(c.Value<int64_t>(row)), seed);
    case TypeId::kFloat: {
      float f = c.Value<float>(row);
      if (f == 0.0f) return HashInt(0, seed);
      uint32_t bits;
      if (std::isnan(f)) {
        bits = 0x7fc00000u;
      } else {
        std::memcpy(&bits, &f, 4);
      }
      return HashInt(bits, seed);
    }
    case TypeId::kDouble: {
      double d = c.Value<double>(row);
      if (d == 0.0) return HashLong(0, seed);
      uint64_t bits;
      if (std::isnan(d)) {
        bits = 0x7ff8000000000000ull;
      } else {
        std::memcpy(&bits, &d, 8);
      }
      return HashLong(bits, seed);
    }
    case TypeId::kDecimal: {
      int128_t v = c.Value<int128_t>(row);
      if (c.type->precision() <= 18) return HashLong(static_cast<uint64_t>(static_cast<int64_t>(v)), seed);
      return HashBytes(BigIntegerBytes(v), seed);
    }
    case TypeId::kString:
    case TypeId::kBinary: return HashBytes(c.View(row), seed);
    case TypeId::kStruct:
      for (const ColumnPtr& child : c.children) seed = HashValue(*child, row, seed);
      return seed;
    case TypeId::kArray:
      for (int64_t e = c.offsets[static_cast<size_t>(row)]; e < c.offsets[static_cast<size_t>(row) + 1]; ++e) {
        seed = HashValue(*c.children[0], e, seed);
      }
      return seed;
    default: return seed;
  }
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
  if (node.op != Op::kHash) return Digest(node, args, rows);
  auto out = NewFixedColumn(node.type, rows);
  int32_t* values = reinterpret_cast<int32_t*>(out->data.data());
  for (int64_t i = 0; i < rows; ++i) {
    uint32_t h = kSeed;
    for (const Datum& d : args) h = HashValue(*d.column, d.scalar ? 0 : i, h);
    values[i] = static_cast<int32_t>(h);
  }
  return Datum{out, false};
}

}  // namespace sluice::expr
