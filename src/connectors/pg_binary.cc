#include "sluice/connectors/pg_binary.h"

#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

// PostgreSQL counts dates and timestamps from 2000-01-01.
constexpr int64_t kPgEpochDays = 10957;
constexpr int64_t kPgEpochMicros = kPgEpochDays * 86400LL * 1000000LL;

Status Unreadable(std::string_view what) {
  return Status::Error(errors::kInvalidArgument, "PostgreSQL sent a binary " + std::string(what) +
                                                     " value sluice cannot read");
}

template <typename T>
T ReadBigEndian(const char* at) {
  using U = std::make_unsigned_t<T>;
  U u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u = static_cast<U>((u << 8) | static_cast<uint8_t>(at[i]));
  return static_cast<T>(u);
}

template <typename T>
void Store(T value, uint8_t* out) {
  std::memcpy(out, &value, sizeof(T));
}

template <typename T>
T Load(const uint8_t* in) {
  T value;
  std::memcpy(&value, in, sizeof(T));
  return value;
}

// 10^0 .. 10^38, and the largest value that can be multiplied by each without passing 38 digits:
// tables, so that decoding a numeric divides nothing 128 bits wide.
constexpr std::array<int128_t, 39> kPowersOfTen = [] {
  std::array<int128_t, 39> powers{};
  powers[0] = 1;
  for (size_t i = 1; i < powers.size(); ++i) powers[i] = powers[i - 1] * 10;
  return powers;
}();

constexpr int128_t kMaxUnscaled = kPowersOfTen[38] - 1;  // 38 decimal digits, decimal's limit

constexpr std::array<int128_t, 39> kMaxBeforeShift = [] {
  std::array<int128_t, 39> limits{};
  for (size_t i = 0; i < limits.size(); ++i) limits[i] = kMaxUnscaled / kPowersOfTen[i];
  return limits;
}();

// value * 10^shift + addend (value, addend >= 0, shift <= 38), failing when the result would
// need more than 38 digits.
bool ShiftAdd(int128_t* value, int shift, int addend) {
  if (*value > kMaxBeforeShift[shift]) return false;
  const int128_t shifted = *value * kPowersOfTen[shift];
  if (shifted > kMaxUnscaled - addend) return false;
  *value = shifted + addend;
  return true;
}

// numeric's send form: int16 ndigits, int16 weight, uint16 sign, uint16 dscale, then ndigits
// base-10000 digits, the first worth 10000^weight. Read as the unscaled value at `scale`; digits
// below the scale must be zero (the column's typmod rounds every value to its scale).
enum class NumericRead { kValue, kNull, kError };

NumericRead ReadNumeric(std::string_view bytes, int scale, int128_t* out) {
  if (bytes.size() < 8) return NumericRead::kError;
  const int ndigits = ReadBigEndian<int16_t>(bytes.data());
  const int weight = ReadBigEndian<int16_t>(bytes.data() + 2);
  const uint16_t sign = ReadBigEndian<uint16_t>(bytes.data() + 4);
  if (ndigits < 0 || bytes.size() != 8 + 2 * static_cast<size_t>(ndigits)) return NumericRead::kError;
  if (sign == 0xC000 || sign == 0xD000 || sign == 0xF000) return NumericRead::kNull;  // NaN, ±Infinity
  if (sign != 0x0000 && sign != 0x4000) return NumericRead::kError;
  // `value` counts units of 10^unit in the unscaled result; each digit is folded in at the unit
  // max(its own, 0), dropping its zeros below the scale.
  int128_t value = 0;
  int unit = 0;
  for (int i = 0; i < ndigits; ++i) {
    const int digit = ReadBigEndian<int16_t>(bytes.data() + 8 + 2 * i);
    if (digit < 0 || digit > 9999) return NumericRead::kError;
    const int digit_unit = 4 * (weight - i) + scale;  // the digit's ones sit at 10^digit_unit
    if (digit_unit <= -4) {
      if (digit != 0) return NumericRead::kError;
      continue;
    }
    const int target = digit_unit > 0 ? digit_unit : 0;
    // digit_unit > -4: the digit's zeros below the scale are 10^0 .. 10^3.
    static constexpr int kBelow[] = {1, 10, 100, 1000};
    const int below = kBelow[target - digit_unit];
    if (digit % below != 0) return NumericRead::kError;
    const int shift = value == 0 ? 0 : unit - target;
    if (shift > 38 || !ShiftAdd(&value, shift, digit / below)) return NumericRead::kError;
    unit = target;
  }
  if (value != 0) {
    if (unit > 38 || !ShiftAdd(&value, unit, 0)) return NumericRead::kError;
  }
  *out = sign == 0x4000 ? -value : value;
  return NumericRead::kValue;
}

void AppendUuidText(std::string_view bytes, ColumnBuilder* builder) {
  static constexpr char kHex[] = "0123456789abcdef";
  uint8_t* out = static_cast<BinaryBuilder*>(builder)->AppendUninitialized(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *out++ = '-';
    const auto byte = static_cast<uint8_t>(bytes[i]);
    *out++ = static_cast<uint8_t>(kHex[byte >> 4]);
    *out++ = static_cast<uint8_t>(kHex[byte & 15]);
  }
}

}  // namespace

std::optional<PgBinaryKind> PgBinaryKindFor(uint32_t oid, bool is_enum, const PgColumnMapping& mapping) {
  if (is_enum) return PgBinaryKind::kBytes;
  switch (oid) {
    case pg_oid::kBool: return PgBinaryKind::kBool;
    case pg_oid::kInt2: return PgBinaryKind::kInt2;
    case pg_oid::kInt4: return PgBinaryKind::kInt4;
    case pg_oid::kInt8: return PgBinaryKind::kInt8;
    case pg_oid::kFloat4: return PgBinaryKind::kFloat4;
    case pg_oid::kFloat8: return PgBinaryKind::kFloat8;
    case pg_oid::kDate: return PgBinaryKind::kDate;
    case pg_oid::kTimestamp:
    case pg_oid::kTimestamptz: return PgBinaryKind::kTimestamp;
    case pg_oid::kBytea:
    case pg_oid::kText:
    case pg_oid::kVarchar:
    case pg_oid::kBpchar:
    case pg_oid::kName:
    case pg_oid::kJson: return PgBinaryKind::kBytes;
    case pg_oid::kJsonb: return PgBinaryKind::kJsonb;
    case pg_oid::kUuid: return PgBinaryKind::kUuid;
    case pg_oid::kNumeric:
      if (mapping.text_kind == PgTextKind::kNumeric) return PgBinaryKind::kNumeric;
      return std::nullopt;
    default: return std::nullopt;
  }
}

int PgBinaryWidth(PgBinaryKind kind) {
  switch (kind) {
    case PgBinaryKind::kBool: return 1;
    case PgBinaryKind::kInt2: return 2;
    case PgBinaryKind::kInt4:
    case PgBinaryKind::kFloat4:
    case PgBinaryKind::kDate: return 4;
    case PgBinaryKind::kInt8:
    case PgBinaryKind::kFloat8:
    case PgBinaryKind::kTimestamp: return 8;
    case PgBinaryKind::kNumeric: return 16;
    case PgBinaryKind::kBytes:
    case PgBinaryKind::kJsonb:
    case PgBinaryKind::kUuid: return 0;
  }
  return 0;
}

Status DecodePgBinaryFixed(PgBinaryKind kind, int scale, std::string_view bytes, uint8_t* out, bool* is_null) {
  *is_null = false;
  switch (kind) {
    case PgBinaryKind::kBool:
      if (bytes.size() != 1 || static_cast<uint8_t>(bytes[0]) > 1) return Unreadable("boolean");
      *out = static_cast<uint8_t>(bytes[0]);
      return Status::OK();
    case PgBinaryKind::kInt2:
      if (bytes.size() != 2) return Unreadable("smallint");
      Store(ReadBigEndian<int16_t>(bytes.data()), out);
      return Status::OK();
    case PgBinaryKind::kInt4:
      if (bytes.size() != 4) return Unreadable("integer");
      Store(ReadBigEndian<int32_t>(bytes.data()), out);
      return Status::OK();
    case PgBinaryKind::kInt8:
      if (bytes.size() != 8) return Unreadable("bigint");
      Store(ReadBigEndian<int64_t>(bytes.data()), out);
      return Status::OK();
    case PgBinaryKind::kFloat4:
      if (bytes.size() != 4) return Unreadable("real");
      Store(std::bit_cast<float>(ReadBigEndian<uint32_t>(bytes.data())), out);
      return Status::OK();
    case PgBinaryKind::kFloat8:
      if (bytes.size() != 8) return Unreadable("double precision");
      Store(std::bit_cast<double>(ReadBigEndian<uint64_t>(bytes.data())), out);
      return Status::OK();
    case PgBinaryKind::kNumeric: {
      int128_t value = 0;
      switch (ReadNumeric(bytes, scale, &value)) {
        case NumericRead::kValue: break;
        case NumericRead::kNull: *is_null = true; break;
        case NumericRead::kError: return Unreadable("numeric");
      }
      Store(value, out);
      return Status::OK();
    }
    case PgBinaryKind::kDate: {
      if (bytes.size() != 4) return Unreadable("date");
      const int32_t days = ReadBigEndian<int32_t>(bytes.data());
      if (days == std::numeric_limits<int32_t>::max() || days == std::numeric_limits<int32_t>::min()) {
        *is_null = true;  // ±infinity
        Store(int32_t{0}, out);
        return Status::OK();
      }
      const int64_t unix_days = int64_t{days} + kPgEpochDays;
      if (unix_days > std::numeric_limits<int32_t>::max()) return Unreadable("date");
      Store(static_cast<int32_t>(unix_days), out);
      return Status::OK();
    }
    case PgBinaryKind::kTimestamp: {
      if (bytes.size() != 8) return Unreadable("timestamp");
      const int64_t micros = ReadBigEndian<int64_t>(bytes.data());
      if (micros == std::numeric_limits<int64_t>::max() || micros == std::numeric_limits<int64_t>::min()) {
        *is_null = true;  // ±infinity
        Store(int64_t{0}, out);
        return Status::OK();
      }
      int64_t unix_micros;
      if (__builtin_add_overflow(micros, kPgEpochMicros, &unix_micros)) return Unreadable("timestamp");
      Store(unix_micros, out);
      return Status::OK();
    }
    case PgBinaryKind::kBytes:
    case PgBinaryKind::kJsonb:
    case PgBinaryKind::kUuid: break;
  }
  return Unreadable("variable-width");
}

Status AppendPgBinary(PgBinaryKind kind, int scale, std::string_view bytes, ColumnBuilder* builder) {
  switch (kind) {
    case PgBinaryKind::kBytes:
      static_cast<BinaryBuilder*>(builder)->Append(bytes);
      return Status::OK();
    case PgBinaryKind::kJsonb:
      if (bytes.empty() || bytes[0] != 1) return Unreadable("jsonb");
      static_cast<BinaryBuilder*>(builder)->Append(bytes.substr(1));
      return Status::OK();
    case PgBinaryKind::kUuid:
      if (bytes.size() != 16) return Unreadable("uuid");
      AppendUuidText(bytes, builder);
      return Status::OK();
    default: break;
  }
  alignas(16) uint8_t value[16];
  bool is_null;
  SLUICE_RETURN_IF_ERROR(DecodePgBinaryFixed(kind, scale, bytes, value, &is_null));
  if (is_null) {
    builder->AppendNull();
    return Status::OK();
  }
  switch (kind) {
    case PgBinaryKind::kBool: static_cast<BooleanBuilder*>(builder)->Append(value[0]); break;
    case PgBinaryKind::kInt2: static_cast<Int16Builder*>(builder)->Append(Load<int16_t>(value)); break;
    case PgBinaryKind::kInt4:
    case PgBinaryKind::kDate: static_cast<Int32Builder*>(builder)->Append(Load<int32_t>(value)); break;
    case PgBinaryKind::kInt8:
    case PgBinaryKind::kTimestamp: static_cast<Int64Builder*>(builder)->Append(Load<int64_t>(value)); break;
    case PgBinaryKind::kFloat4: static_cast<FloatBuilder*>(builder)->Append(Load<float>(value)); break;
    case PgBinaryKind::kFloat8: static_cast<DoubleBuilder*>(builder)->Append(Load<double>(value)); break;
    case PgBinaryKind::kNumeric: static_cast<DecimalBuilder*>(builder)->Append(Load<int128_t>(value)); break;
    default: break;
  }
  return Status::OK();
}

}  // namespace sluice::connectors
