// Physical Parquet values to sluice values: narrowing and widening of integers, decimals,
// timestamp units, INT96 timestamps.
#include <cstring>

#include "parquet/column_reader.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {
namespace {

bool IsUnsigned(const SchemaElement& element) {
  if (element.logical_type && element.logical_type->kind == LogicalType::Kind::kInteger) {
    return !element.logical_type->is_signed;
  }
  if (!element.converted_type) return false;
  switch (*element.converted_type) {
    case ConvertedType::kUint8:
    case ConvertedType::kUint16:
    case ConvertedType::kUint32:
    case ConvertedType::kUint64:
      return true;
    default:
      return false;
  }
}

TimeUnit TimestampUnit(const SchemaElement& element) {
  if (element.logical_type && element.logical_type->kind == LogicalType::Kind::kTimestamp) {
    return element.logical_type->unit;
  }
  if (element.converted_type == ConvertedType::kTimestampMillis) return TimeUnit::kMillis;
  return TimeUnit::kMicros;
}

Status Unsupported(const LeafColumn& leaf) {
  std::string path;
  for (const auto& name : leaf.path) path += (path.empty() ? "" : ".") + name;
  return Status::Error(errors::kParquetUnsupportedFeature,
                       "column " + path + ": cannot read " + TypeName(*leaf.element.type) + " as " + leaf.type->ToString());
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Floor division, so that instants before 1970 round towards the past like whole microseconds.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

constexpr int64_t kJulianDayOfEpoch = 2440588;
constexpr uint64_t kMicrosPerDay = 86400ull * 1000 * 1000;

}  // namespace

Result<Conversion> ChooseConversion(const LeafColumn& leaf) {
  if (!leaf.element.type) return Unsupported(leaf);
  const TypeId target = leaf.type->id();
  switch (*leaf.element.type) {
    case Type::kBoolean:
      if (target == TypeId::kBoolean) return Conversion::kCopy;
      break;
    case Type::kInt32:
      switch (target) {
        case TypeId::kInteger:
        case TypeId::kDate:
          return Conversion::kCopy;
        case TypeId::kByte:
          return Conversion::kInt32ToInt8;
        case TypeId::kShort:
          return Conversion::kInt32ToInt16;
        case TypeId::kLong:
          return IsUnsigned(leaf.element) ? Conversion::kUint32ToInt64 : Conversion::kInt32ToInt64;
        case TypeId::kDecimal:
          return Conversion::kInt32ToDecimal;
        default:
          break;
      }
      break;
    case Type::kInt64:
      switch (target) {
        case TypeId::kLong:
          return Conversion::kCopy;
        case TypeId::kTimestamp:
        case TypeId::kTimestampNtz:
          switch (TimestampUnit(leaf.element)) {
            case TimeUnit::kMillis:
              return Conversion::kMillisToMicros;
            case TimeUnit::kMicros:
              return Conversion::kCopy;
            case TimeUnit::kNanos:
              return Conversion::kNanosToMicros;
          }
          break;
        case TypeId::kDecimal:
          return IsUnsigned(leaf.element) ? Conversion::kUint64ToDecimal : Conversion::kInt64ToDecimal;
        default:
          break;
      }
      break;
    case Type::kInt96:
      if (target == TypeId::kTimestamp || target == TypeId::kTimestampNtz) return Conversion::kInt96ToMicros;
      if (target == TypeId::kBinary) return Conversion::kFixedToBinary;
      break;
    case Type::kFloat:
      if (target == TypeId::kFloat) return Conversion::kCopy;
      break;
    case Type::kDouble:
      if (target == TypeId::kDouble) return Conversion::kCopy;
      break;
    case Type::kByteArray:
      if (target == TypeId::kString || target == TypeId::kBinary) return Conversion::kCopy;
      if (target == TypeId::kDecimal) return Conversion::kBytesToDecimal;
      break;
    case Type::kFixedLenByteArray:
      if (!leaf.element.type_length || *leaf.element.type_length <= 0) {
        return CorruptData("FIXED_LEN_BYTE_ARRAY column without a positive type_length");
      }
      if (target == TypeId::kString || target == TypeId::kBinary) return Conversion::kFixedToBinary;
      if (target == TypeId::kDecimal) return Conversion::kBytesToDecimal;
      break;
  }
  return Unsupported(leaf);
}

namespace {

__extension__ typedef unsigned __int128 Uint128;

Status AppendDecimal(const uint8_t* p, int64_t length, uint8_t* out) {
  if (length > 16) return CorruptData("decimal value of " + std::to_string(length) + " bytes, wider than 16");
  // Big-endian two's complement, sign-extended from its first byte.
  Uint128 v = (length > 0 && (p[0] & 0x80)) ? ~static_cast<Uint128>(0) : 0;
  for (int64_t i = 0; i < length; ++i) v = (v << 8) | p[i];
  Store(out, static_cast<int128_t>(v));
  return Status::OK();
}

}  // namespace

Status ConvertFixed(Conversion conversion, const uint8_t* in, int physical_width, int64_t count, LeafData* out) {
  if (conversion == Conversion::kFixedToBinary) {
    const size_t start = out->data.size();
    out->data.insert(out->data.end(), in, in + count * physical_width);
    for (int64_t i = 1; i <= count; ++i) out->offsets.push_back(static_cast<int64_t>(start + i * physical_width));
    out->num_values += count;
    return Status::OK();
  }
  if (conversion == Conversion::kBytesToDecimal) {
    const size_t start = out->data.size();
    out->data.resize(start + count * 16);
    for (int64_t i = 0; i < count; ++i) {
      SLUICE_RETURN_IF_ERROR(AppendDecimal(in + i * physical_width, physical_width, out->data.data() + start + i * 16));
    }
    out->num_values += count;
    return Status::OK();
  }
  int width = 0;
  switch (conversion) {
    case Conversion::kInt32ToInt8:
      width = 1;
      break;
    case Conversion::kInt32ToInt16:
      width = 2;
      break;
    case Conversion::kInt32ToDecimal:
    case Conversion::kInt64ToDecimal:
    case Conversion::kUint64ToDecimal:
      width = 16;
      break;
    case Conversion::kCopy:
      width = physical_width;
      break;
    default:
      width = 8;
      break;
  }
  const size_t start = out->data.size();
  out->data.resize(start + count * width);
  uint8_t* dst = out->data.data() + start;
  switch (conversion) {
    case Conversion::kCopy:
      if (count > 0) std::memcpy(dst, in, count * width);
      break;
    case Conversion::kInt32ToInt8:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<uint8_t>(Load<int32_t>(in + 4 * i));
      break;
    case Conversion::kInt32ToInt16:
      for (int64_t i = 0; i < count; ++i) Store(dst + 2 * i, static_cast<int16_t>(Load<int32_t>(in + 4 * i)));
      break;
    case Conversion::kInt32ToInt64:
      for (int64_t i = 0; i < count; ++i) Store(dst + 8 * i, static_cast<int64_t>(Load<int32_t>(in + 4 * i)));
      break;
    case Conversion::kUint32ToInt64:
      for (int64_t i = 0; i < count; ++i) Store(dst + 8 * i, static_cast<int64_t>(Load<uint32_t>(in + 4 * i)));
      break;
    case Conversion::kInt32ToDecimal:
      for (int64_t i = 0; i < count; ++i) Store(dst + 16 * i, static_cast<int128_t>(Load<int32_t>(in + 4 * i)));
      break;
    case Conversion::kInt64ToDecimal:
      for (int64_t i = 0; i < count; ++i) Store(dst + 16 * i, static_cast<int128_t>(Load<int64_t>(in + 8 * i)));
      break;
    case Conversion::kUint64ToDecimal:
      for (int64_t i = 0; i < count; ++i) Store(dst + 16 * i, static_cast<int128_t>(Load<uint64_t>(in + 8 * i)));
      break;
    case Conversion::kMillisToMicros:
      // Wrapping multiplication: an out-of-range input gives a wrong instant, never undefined behavior.
      for (int64_t i = 0; i < count; ++i) {
        Store(dst + 8 * i, static_cast<int64_t>(Load<uint64_t>(in + 8 * i) * 1000u));
      }
      break;
    case Conversion::kNanosToMicros:
      for (int64_t i = 0; i < count; ++i) Store(dst + 8 * i, FloorDiv(Load<int64_t>(in + 8 * i), 1000));
      break;
    case Conversion::kInt96ToMicros:
      for (int64_t i = 0; i < count; ++i) {
        const int64_t nanos = Load<int64_t>(in + 12 * i);
        const int64_t day = Load<int32_t>(in + 12 * i + 8);
        const uint64_t micros = static_cast<uint64_t>(day - kJulianDayOfEpoch) * kMicrosPerDay +
                                static_cast<uint64_t>(FloorDiv(nanos, 1000));
        Store(dst + 8 * i, static_cast<int64_t>(micros));
      }
      break;
    default:
      return Status::Error(errors::kInternalError, "conversion does not apply to fixed-width values");
  }
  out->num_values += count;
  return Status::OK();
}

Status ConvertByteArrays(Conversion conversion, const uint8_t* bytes, const int64_t* offsets, int64_t count,
                         LeafData* out) {
  if (conversion != Conversion::kBytesToDecimal) {
    return Status::Error(errors::kInternalError, "conversion does not apply to byte arrays");
  }
  const size_t start = out->data.size();
  out->data.resize(start + count * 16);
  for (int64_t i = 0; i < count; ++i) {
    SLUICE_RETURN_IF_ERROR(
        AppendDecimal(bytes + offsets[i], offsets[i + 1] - offsets[i], out->data.data() + start + i * 16));
  }
  out->num_values += count;
  return Status::OK();
}

Status ConvertStatisticsValue(const LeafColumn& leaf, std::string_view plain, LeafData* out) {
  SLUICE_ASSIGN_OR_RETURN(Conversion conversion, ChooseConversion(leaf));
  const auto* p = reinterpret_cast<const uint8_t*>(plain.data());
  const Type physical = *leaf.element.type;
  if (physical == Type::kByteArray) {
    if (conversion == Conversion::kCopy) {
      out->data.assign(p, p + plain.size());
      out->offsets.push_back(static_cast<int64_t>(plain.size()));
      out->num_values = 1;
      return Status::OK();
    }
    const int64_t offsets[2] = {0, static_cast<int64_t>(plain.size())};
    return ConvertByteArrays(conversion, p, offsets, 1, out);
  }
  int width = 0;
  switch (physical) {
    case Type::kBoolean:
      width = 1;
      break;
    case Type::kInt32:
    case Type::kFloat:
      width = 4;
      break;
    case Type::kInt64:
    case Type::kDouble:
      width = 8;
      break;
    case Type::kInt96:
      width = 12;
      break;
    case Type::kFixedLenByteArray:
      width = *leaf.element.type_length;
      break;
    case Type::kByteArray:
      break;
  }
  if (static_cast<int64_t>(plain.size()) != width) {
    return CorruptData("statistics value of " + std::to_string(plain.size()) + " bytes for a " +
                       TypeName(physical) + " column");
  }
  if (physical == Type::kBoolean) {
    const uint8_t value = p[0] & 1;
    return ConvertFixed(conversion, &value, 1, 1, out);
  }
  return ConvertFixed(conversion, p, width, 1, out);
}

}  // namespace sluice::parquet
