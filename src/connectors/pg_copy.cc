#include "sluice/connectors/pg_copy.h"

#include <bit>
#include <cstring>

#include "sluice/core/compute.h"

namespace sluice::connectors {

namespace {

// PostgreSQL counts dates and timestamps from 2000-01-01.
constexpr int64_t kPgEpochDays = 10957;
constexpr int64_t kPgEpochMicros = kPgEpochDays * 86400LL * 1000000LL;

__extension__ typedef unsigned __int128 uint128_t;

template <typename T>
void PutBigEndian(T value, std::string* out) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(value);
  char bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<char>(u >> (8 * (sizeof(T) - 1 - i)));
  out->append(bytes, sizeof(T));
}

// numeric's binary form: base-10000 digits around the decimal point.
void PutNumeric(int128_t unscaled, int scale, std::string* out) {
  uint128_t magnitude = unscaled < 0 ? -static_cast<uint128_t>(unscaled) : static_cast<uint128_t>(unscaled);
  // Decimal digits, most significant first, with the fraction padded to a multiple of 4 digits
  // and the integer part to a multiple of 4 digits.
  char digits[96];
  int count = 0;
  char reversed[48];
  int n = 0;
  do {
    reversed[n++] = static_cast<char>(magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  while (n <= scale) reversed[n++] = 0;
  int integer_digits = n - scale;
  int fraction_pad = (4 - scale % 4) % 4;
  int integer_pad = (4 - integer_digits % 4) % 4;
  for (int i = 0; i < integer_pad; ++i) digits[count++] = 0;
  for (int i = n - 1; i >= 0; --i) digits[count++] = reversed[i];
  for (int i = 0; i < fraction_pad; ++i) digits[count++] = 0;
  int groups = count / 4;
  int integer_groups = (integer_digits + integer_pad) / 4;
  int16_t group_values[24];
  for (int g = 0; g < groups; ++g) {
    group_values[g] = static_cast<int16_t>(digits[4 * g] * 1000 + digits[4 * g + 1] * 100 + digits[4 * g + 2] * 10 +
                                           digits[4 * g + 3]);
  }
  int first = 0, last = groups;
  while (first < last && group_values[first] == 0) ++first;
  while (last > first && group_values[last - 1] == 0) --last;
  int16_t ndigits = static_cast<int16_t>(last - first);
  int16_t weight = ndigits == 0 ? 0 : static_cast<int16_t>(integer_groups - 1 - first);
  uint16_t sign = unscaled < 0 ? 0x4000 : 0x0000;
  PutBigEndian<int32_t>(8 + 2 * ndigits, out);
  PutBigEndian<int16_t>(ndigits, out);
  PutBigEndian<int16_t>(weight, out);
  PutBigEndian<uint16_t>(sign, out);
  PutBigEndian<uint16_t>(static_cast<uint16_t>(scale), out);
  for (int g = first; g < last; ++g) PutBigEndian<int16_t>(group_values[g], out);
}

template <typename T>
void OverwriteBigEndian(T value, char* at) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(value);
  for (size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<char>(u >> (8 * (sizeof(T) - 1 - i)));
}

template <typename Physical, typename Wire, typename Convert>
void EncodeFixed(const Column& column, std::span<const int64_t> rows, std::string* bytes,
                 std::vector<uint32_t>* starts, Convert convert) {
  const Physical* values = column.values<Physical>();
  for (int64_t row : rows) {
    starts->push_back(static_cast<uint32_t>(bytes->size()));
    if (column.IsNull(row)) {
      PutBigEndian<int32_t>(-1, bytes);
    } else {
      PutBigEndian<int32_t>(sizeof(Wire), bytes);
      PutBigEndian<Wire>(convert(values[row]), bytes);
    }
  }
}

// The oid of the PostgreSQL type a scalar sluice type is sent as (the element type of its array).
uint32_t PgElementOid(TypeId id) {
  switch (id) {
    case TypeId::kBoolean: return 16;
    case TypeId::kByte:
    case TypeId::kShort: return 21;
    case TypeId::kInteger: return 23;
    case TypeId::kLong: return 20;
    case TypeId::kFloat: return 700;
    case TypeId::kDouble: return 701;
    case TypeId::kDecimal: return 1700;
    case TypeId::kString: return 25;
    case TypeId::kBinary: return 17;
    case TypeId::kDate: return 1082;
    case TypeId::kTimestamp: return 1184;
    case TypeId::kTimestampNtz: return 1114;
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: return 0;
  }
  return 0;
}

}  // namespace

bool IsPgNativeArray(const DataType& type) {
  return type.id() == TypeId::kArray && PgElementOid(type.element_type()->id()) != 0;
}

std::string PgColumnType(const DataType& type, bool array_as_jsonb) {
  if (IsPgNativeArray(type) && !array_as_jsonb) return PgColumnType(*type.element_type()) + "[]";
  switch (type.id()) {
    case TypeId::kBoolean: return "boolean";
    case TypeId::kByte:
    case TypeId::kShort: return "smallint";
    case TypeId::kInteger: return "integer";
    case TypeId::kLong: return "bigint";
    case TypeId::kFloat: return "real";
    case TypeId::kDouble: return "double precision";
    case TypeId::kDecimal: return "numeric(" + std::to_string(type.precision()) + "," + std::to_string(type.scale()) + ")";
    case TypeId::kString: return "text";
    case TypeId::kBinary: return "bytea";
    case TypeId::kDate: return "date";
    case TypeId::kTimestamp: return "timestamptz";
    case TypeId::kTimestampNtz: return "timestamp";
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: return "jsonb";
  }
  return "text";
}

void PgCopyEncoder::AppendHeader(std::string* out) {
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";
  out->append(kSignature, 11);
  PutBigEndian<int32_t>(0, out);  // flags
  PutBigEndian<int32_t>(0, out);  // header extension length
}

void PgCopyEncoder::AppendTrailer(std::string* out) { PutBigEndian<int16_t>(-1, out); }

void PgCopyEncoder::EncodeColumn(const Column& column, std::span<const int64_t> rows, bool as_jsonb,
                                 EncodedColumn* out) {
  out->bytes.clear();
  out->starts.clear();
  out->starts.reserve(rows.size() + 1);
  std::string* bytes = &out->bytes;
  auto* starts = &out->starts;
  auto same = [](auto v) { return v; };
  switch (column.type->id()) {
    case TypeId::kBoolean: EncodeFixed<uint8_t, uint8_t>(column, rows, bytes, starts, same); break;
    case TypeId::kByte: EncodeFixed<int8_t, int16_t>(column, rows, bytes, starts, [](int8_t v) { return int16_t{v}; }); break;
    case TypeId::kShort: EncodeFixed<int16_t, int16_t>(column, rows, bytes, starts, same); break;
    case TypeId::kInteger: EncodeFixed<int32_t, int32_t>(column, rows, bytes, starts, same); break;
    case TypeId::kLong: EncodeFixed<int64_t, int64_t>(column, rows, bytes, starts, same); break;
    case TypeId::kFloat:
      EncodeFixed<float, uint32_t>(column, rows, bytes, starts, [](float v) { return std::bit_cast<uint32_t>(v); });
      break;
    case TypeId::kDouble:
      EncodeFixed<double, uint64_t>(column, rows, bytes, starts, [](double v) { return std::bit_cast<uint64_t>(v); });
      break;
    case TypeId::kDate:
      EncodeFixed<int32_t, int32_t>(column, rows, bytes, starts,
                                    [](int32_t v) { return static_cast<int32_t>(v - kPgEpochDays); });
      break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      EncodeFixed<int64_t, int64_t>(column, rows, bytes, starts, [](int64_t v) { return v - kPgEpochMicros; });
      break;
    case TypeId::kDecimal: {
      const int scale = column.type->scale();
      for (int64_t row : rows) {
        starts->push_back(static_cast<uint32_t>(bytes->size()));
        if (column.IsNull(row)) {
          PutBigEndian<int32_t>(-1, bytes);
        } else {
          PutNumeric(column.Value<int128_t>(row), scale, bytes);
        }
      }
      break;
    }
    case TypeId::kString:
    case TypeId::kBinary:
      for (int64_t row : rows) {
        starts->push_back(static_cast<uint32_t>(bytes->size()));
        if (column.IsNull(row)) {
          PutBigEndian<int32_t>(-1, bytes);
        } else {
          std::string_view v = column.View(row);
          PutBigEndian<int32_t>(static_cast<int32_t>(v.size()), bytes);
          bytes->append(v);
        }
      }
      break;
    case TypeId::kArray:
      if (!as_jsonb && IsPgNativeArray(*column.type)) {
        EncodeArray(column, rows, out);
        return;
      }
      [[fallthrough]];
    case TypeId::kStruct:
    case TypeId::kMap: {
      // jsonb's binary form: a version byte (1), then the JSON text (jsonb keeps numbers exact).
      for (int64_t row : rows) {
        starts->push_back(static_cast<uint32_t>(bytes->size()));
        if (column.IsNull(row)) {
          PutBigEndian<int32_t>(-1, bytes);
          continue;
        }
        const size_t length_at = bytes->size();
        PutBigEndian<int32_t>(0, bytes);
        bytes->push_back('\1');
        AppendValueJson(column, row, bytes, JsonDecimals::kBare);
        OverwriteBigEndian(static_cast<int32_t>(bytes->size() - length_at - 4), bytes->data() + length_at);
      }
      break;
    }
  }
  starts->push_back(static_cast<uint32_t>(bytes->size()));
}

// array_send's form: dimensions (1, or 0 for an empty array), whether any element is null, the
// element type's oid, each dimension's length and lower bound (1), then the elements as COPY
// fields. The elements of every row are encoded in one pass over the child column.
void PgCopyEncoder::EncodeArray(const Column& column, std::span<const int64_t> rows, EncodedColumn* out) {
  const Column& elements = *column.children[0];
  std::vector<int64_t> element_rows;
  for (int64_t row : rows) {
    if (column.IsNull(row)) continue;
    for (int64_t e = column.offsets[row]; e < column.offsets[row + 1]; ++e) element_rows.push_back(e);
  }
  EncodedColumn encoded;
  EncodeColumn(elements, element_rows, false, &encoded);
  const auto element_oid = static_cast<int32_t>(PgElementOid(elements.type->id()));
  std::string* bytes = &out->bytes;
  size_t next = 0;  // the first of the row's elements in `encoded`
  for (int64_t row : rows) {
    out->starts.push_back(static_cast<uint32_t>(bytes->size()));
    if (column.IsNull(row)) {
      PutBigEndian<int32_t>(-1, bytes);
      continue;
    }
    const int64_t count = column.offsets[row + 1] - column.offsets[row];
    bool has_null = false;
    for (int64_t e = column.offsets[row]; e < column.offsets[row + 1]; ++e) has_null |= elements.IsNull(e);
    const uint32_t first = encoded.starts[next];
    const uint32_t last = encoded.starts[next + static_cast<size_t>(count)];
    next += static_cast<size_t>(count);
    PutBigEndian<int32_t>(static_cast<int32_t>(12 + (count > 0 ? 8 : 0) + (last - first)), bytes);
    PutBigEndian<int32_t>(count > 0 ? 1 : 0, bytes);
    PutBigEndian<int32_t>(has_null ? 1 : 0, bytes);
    PutBigEndian<int32_t>(element_oid, bytes);
    if (count > 0) {
      PutBigEndian<int32_t>(static_cast<int32_t>(count), bytes);
      PutBigEndian<int32_t>(1, bytes);
    }
    bytes->append(encoded.bytes, first, last - first);
  }
  out->starts.push_back(static_cast<uint32_t>(bytes->size()));
}

void PgCopyEncoder::AppendRows(const RecordBatch& batch, std::span<const int> columns, std::span<const int64_t> rows,
                                 std::string* out) {
  if (scratch_.size() < columns.size()) scratch_.resize(columns.size());
  size_t total = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    const auto column = static_cast<size_t>(columns[c]);
    EncodeColumn(*batch.column(columns[c]), rows, column < arrays_as_jsonb_.size() && arrays_as_jsonb_[column],
                 &scratch_[c]);
    total += scratch_[c].bytes.size();
  }
  out->reserve(out->size() + total + rows.size() * 2);
  // Interleave the encoded columns into tuples.
  for (size_t r = 0; r < rows.size(); ++r) {
    PutBigEndian<int16_t>(static_cast<int16_t>(columns.size()), out);
    for (size_t c = 0; c < columns.size(); ++c) {
      const EncodedColumn& e = scratch_[c];
      out->append(e.bytes, e.starts[r], e.starts[r + 1] - e.starts[r]);
    }
  }
}

}  // namespace sluice::connectors
