#include "sluice/connectors/pg_types.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/civil_date.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

Status Unreadable(std::string_view what) {
  return Status::Error(errors::kInvalidArgument, "PostgreSQL returned a " + std::string(what) +
                                                     " value sluice cannot read");
}

template <typename T>
bool ParseInteger(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

template <typename T>
bool ParseFloat(std::string_view text, T* out) {
  if (text == "NaN") {
    *out = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  if (text == "Infinity" || text == "-Infinity") {
    *out = text[0] == '-' ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    return true;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "-123.4500" at scale s -> unscaled int128. Fails on overflow beyond 38 digits or when the text
// has more fraction digits than the scale (PostgreSQL rounds to the typmod, so it never does).
bool ParseDecimal(std::string_view text, int scale, int128_t* out) {
  bool negative = false;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  int128_t value = 0;
  int digits = 0;
  int fraction_digits = -1;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (fraction_digits >= 0) return false;
      fraction_digits = 0;
      continue;
    }
    if (c < '0' || c > '9') return false;
    if (fraction_digits >= 0 && ++fraction_digits > scale) {
      if (c != '0') return false;  // only trailing zeros may exceed the scale
      continue;
    }
    if (value != 0 || c != '0') ++digits;
    if (digits > 38) return false;
    value = value * 10 + (c - '0');
  }
  if (fraction_digits < 0) fraction_digits = 0;
  for (int k = fraction_digits; k < scale; ++k) {
    if (++digits > 38) return false;
    value *= 10;
  }
  *out = negative ? -value : value;
  return true;
}

bool ParseFixedDigits(std::string_view text, size_t pos, size_t count, int64_t* out) {
  if (pos + count > text.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

// Strips a trailing " BC" and returns whether it was there.
bool StripBc(std::string_view* text) {
  if (text->size() > 3 && text->substr(text->size() - 3) == " BC") {
    text->remove_suffix(3);
    return true;
  }
  return false;
}

// "YYYY-MM-DD" (the year may have more than four digits) at the start of text; returns the
// length consumed or 0.
size_t ParseDatePart(std::string_view text, bool bc, int64_t* days) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos || dash < 4) return 0;
  int64_t year, month, day;
  if (!ParseFixedDigits(text, 0, dash, &year) || text.size() < dash + 6 || text[dash + 3] != '-' ||
      !ParseFixedDigits(text, dash + 1, 2, &month) || !ParseFixedDigits(text, dash + 4, 2, &day)) {
    return 0;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return 0;
  if (bc) year = 1 - year;
  *days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return dash + 6;
}

// "HH:MM:SS[.ffffff]" -> microseconds since midnight; returns the length consumed or 0.
size_t ParseTimePart(std::string_view text, int64_t* micros) {
  int64_t h, m, s;
  if (!ParseFixedDigits(text, 0, 2, &h) || text.size() < 8 || text[2] != ':' || text[5] != ':' ||
      !ParseFixedDigits(text, 3, 2, &m) || !ParseFixedDigits(text, 6, 2, &s)) {
    return 0;
  }
  size_t pos = 8;
  int64_t fraction = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 6) {
        fraction = fraction * 10 + (text[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return 0;
    for (; digits < 6; ++digits) fraction *= 10;
  }
  *micros = ((h * 60 + m) * 60 + s) * 1000000 + fraction;
  return pos;
}

// "+05", "-08:30", "+05:30:15" -> seconds east of UTC.
bool ParseOffset(std::string_view text, int64_t* seconds) {
  if (text.size() < 3 || (text[0] != '+' && text[0] != '-')) return false;
  int64_t h, m = 0, s = 0;
  if (!ParseFixedDigits(text, 1, 2, &h)) return false;
  size_t pos = 3;
  if (pos < text.size()) {
    if (text[pos] != ':' || !ParseFixedDigits(text, pos + 1, 2, &m)) return false;
    pos += 3;
  }
  if (pos < text.size()) {
    if (text[pos] != ':' || !ParseFixedDigits(text, pos + 1, 2, &s)) return false;
    pos += 3;
  }
  if (pos != text.size()) return false;
  *seconds = (text[0] == '-' ? -1 : 1) * (h * 3600 + m * 60 + s);
  return true;
}

bool ParseTimestamp(std::string_view text, bool with_offset, int64_t* micros) {
  bool bc = StripBc(&text);
  int64_t days;
  size_t pos = ParseDatePart(text, bc, &days);
  if (pos == 0 || pos >= text.size() || text[pos] != ' ') return false;
  int64_t time;
  size_t used = ParseTimePart(text.substr(pos + 1), &time);
  if (used == 0) return false;
  std::string_view rest = text.substr(pos + 1 + used);
  int64_t offset = 0;
  if (with_offset ? !ParseOffset(rest, &offset) : !rest.empty()) return false;
  *micros = days * 86400LL * 1000000LL + time - offset * 1000000LL;
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Built-in element types and their array types (pg_type's typarray), checked against a real server
// by PgTypesIntegrationTest.
struct ArrayOid {
  uint32_t element, array;
};
constexpr ArrayOid kArrayOids[] = {
    {pg_oid::kBool, 1000},      {pg_oid::kBytea, 1001},   {pg_oid::kChar, 1002},      {pg_oid::kName, 1003},
    {pg_oid::kInt8, 1016},      {pg_oid::kInt2, 1005},    {pg_oid::kInt4, 1007},      {pg_oid::kText, 1009},
    {pg_oid::kOid, 1028},       {pg_oid::kJson, 199},     {pg_oid::kFloat4, 1021},    {pg_oid::kFloat8, 1022},
    {pg_oid::kBpchar, 1014},    {pg_oid::kVarchar, 1015}, {pg_oid::kDate, 1182},      {pg_oid::kTime, 1183},
    {pg_oid::kTimestamp, 1115}, {pg_oid::kTimestamptz, 1185}, {pg_oid::kInterval, 1187}, {pg_oid::kNumeric, 1231},
    {pg_oid::kUuid, 2951},      {pg_oid::kJsonb, 3807},
};

// One element of an array's text form, as array_out prints it: quoted (with backslash escapes)
// when it holds a delimiter, brace, quote, backslash or space, or is empty or NULL; an unquoted
// NULL is a null element.
struct ArrayElement {
  std::string text;
  bool is_null = false;
};

// Splits "{a,"b c",NULL}" (optionally after a "[1:3]=" bounds decoration) into its elements.
// False for a malformed text or one of more than one dimension.
bool SplitArrayText(std::string_view text, std::vector<ArrayElement>* elements) {
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '[') {
    pos = text.find('=');
    if (pos == std::string_view::npos || text.find('[', 1) < pos) return false;  // [a:b][c:d]: 2 dimensions
    ++pos;
  }
  if (pos >= text.size() || text[pos] != '{' || text.back() != '}') return false;
  ++pos;
  const size_t end = text.size() - 1;
  if (pos == end) return true;  // {}
  while (true) {
    ArrayElement element;
    if (pos >= end) return false;
    if (text[pos] == '{') return false;  // a nested array: more than one dimension
    if (text[pos] == '"') {
      for (++pos;; ++pos) {
        if (pos >= end) return false;
        if (text[pos] == '"') break;
        if (text[pos] == '\\' && ++pos >= end) return false;
        element.text += text[pos];
      }
      ++pos;
    } else {
      bool escaped = false;
      for (; pos < end && text[pos] != ','; ++pos) {
        if (text[pos] == '"' || text[pos] == '{' || text[pos] == '}') return false;
        if (text[pos] == '\\') {
          if (++pos >= end) return false;
          escaped = true;
        }
        element.text += text[pos];
      }
      if (element.text.empty()) return false;
      element.is_null = !escaped && element.text.size() == 4 && (element.text[0] | 0x20) == 'n' &&
                        (element.text[1] | 0x20) == 'u' && (element.text[2] | 0x20) == 'l' &&
                        (element.text[3] | 0x20) == 'l';
    }
    elements->push_back(std::move(element));
    if (pos == end) return true;
    if (text[pos] != ',') return false;
    ++pos;
  }
}

Status AppendPgArrayText(const PgColumnMapping& mapping, std::string_view text, ColumnBuilder* builder) {
  std::vector<ArrayElement> elements;
  if (!SplitArrayText(text, &elements)) return Unreadable("array");
  const PgColumnMapping element_mapping{mapping.type->element_type(), mapping.element_text_kind};
  // Every element is read into a scratch builder first, so that an unreadable one leaves the
  // column's builder unchanged.
  std::unique_ptr<ColumnBuilder> scratch = ColumnBuilder::Make(element_mapping.type);
  for (const ArrayElement& element : elements) {
    if (element.is_null) continue;
    if (!AppendPgText(element_mapping, element.text, scratch.get()).ok()) return Unreadable("array");
  }
  auto* list = static_cast<ListBuilder*>(builder);
  for (const ArrayElement& element : elements) {
    if (element.is_null) {
      list->element_builder()->AppendNull();
    } else {
      SLUICE_RETURN_IF_ERROR(AppendPgText(element_mapping, element.text, list->element_builder()));
    }
  }
  list->Append();
  return Status::OK();
}

}  // namespace

uint32_t PgArrayElementOid(uint32_t array_oid) {
  for (const ArrayOid& entry : kArrayOids) {
    if (entry.array == array_oid) return entry.element;
  }
  return 0;
}

uint32_t PgArrayOidOf(uint32_t element_oid) {
  for (const ArrayOid& entry : kArrayOids) {
    if (entry.element == element_oid) return entry.array;
  }
  return 0;
}

PgColumnMapping MapPgType(uint32_t oid, int32_t typmod, bool is_enum) {
  if (is_enum) return {DataType::String(), PgTextKind::kText};
  if (uint32_t element = PgArrayElementOid(oid); element != 0) {
    // An array column's typmod is its elements' (numeric(10,2)[]).
    PgColumnMapping element_mapping = MapPgType(element, typmod);
    return {DataType::Array(element_mapping.type), PgTextKind::kArray, element_mapping.text_kind};
  }
  switch (oid) {
    case pg_oid::kBool: return {DataType::Boolean(), PgTextKind::kBool};
    case pg_oid::kInt2: return {DataType::Short(), PgTextKind::kInt2};
    case pg_oid::kInt4: return {DataType::Integer(), PgTextKind::kInt4};
    case pg_oid::kInt8: return {DataType::Long(), PgTextKind::kInt8};
    case pg_oid::kFloat4: return {DataType::Float(), PgTextKind::kFloat4};
    case pg_oid::kFloat8: return {DataType::Double(), PgTextKind::kFloat8};
    case pg_oid::kDate: return {DataType::Date(), PgTextKind::kDate};
    case pg_oid::kTimestamp: return {DataType::TimestampNtz(), PgTextKind::kTimestamp};
    case pg_oid::kTimestamptz: return {DataType::Timestamp(), PgTextKind::kTimestamptz};
    case pg_oid::kBytea: return {DataType::Binary(), PgTextKind::kBytea};
    case pg_oid::kNumeric: {
      if (typmod >= 4) {
        // typmod = ((precision << 16) | (scale & 0x7ff)) + 4, the scale an 11-bit signed number.
        int precision = ((typmod - 4) >> 16) & 0xffff;
        int scale = (typmod - 4) & 0x7ff;
        if (scale & 0x400) scale -= 0x800;
        auto decimal = DataType::Decimal(precision, scale);
        if (decimal.ok()) return {*decimal, PgTextKind::kNumeric};
      }
      return {DataType::String(), PgTextKind::kText};
    }
    default:
      return {DataType::String(), PgTextKind::kText};
  }
}

Status AppendPgText(const PgColumnMapping& mapping, std::string_view text, ColumnBuilder* builder) {
  switch (mapping.text_kind) {
    case PgTextKind::kBool:
      if (text != "t" && text != "f") return Unreadable("boolean");
      static_cast<BooleanBuilder*>(builder)->Append(text == "t");
      return Status::OK();
    case PgTextKind::kInt2: {
      int16_t v;
      if (!ParseInteger(text, &v)) return Unreadable("smallint");
      static_cast<Int16Builder*>(builder)->Append(v);
      return Status::OK();
    }
    case PgTextKind::kInt4: {
      int32_t v;
      if (!ParseInteger(text, &v)) return Unreadable("integer");
      static_cast<Int32Builder*>(builder)->Append(v);
      return Status::OK();
    }
    case PgTextKind::kInt8: {
      int64_t v;
      if (!ParseInteger(text, &v)) return Unreadable("bigint");
      static_cast<Int64Builder*>(builder)->Append(v);
      return Status::OK();
    }
    case PgTextKind::kFloat4: {
      float v;
      if (!ParseFloat(text, &v)) return Unreadable("real");
      static_cast<FloatBuilder*>(builder)->Append(v);
      return Status::OK();
    }
    case PgTextKind::kFloat8: {
      double v;
      if (!ParseFloat(text, &v)) return Unreadable("double precision");
      static_cast<DoubleBuilder*>(builder)->Append(v);
      return Status::OK();
    }
    case PgTextKind::kNumeric: {
      if (text == "NaN" || text == "Infinity" || text == "-Infinity") {
        builder->AppendNull();
        return Status::OK();
      }
      int128_t v;
      if (!ParseDecimal(text, mapping.type->scale(), &v)) return Unreadable("numeric");
      static_cast<DecimalBuilder*>(builder)->Append(v);
      return Status::OK();
    }
    case PgTextKind::kDate: {
      if (text == "infinity" || text == "-infinity") {
        builder->AppendNull();
        return Status::OK();
      }
      std::string_view body = text;
      bool bc = StripBc(&body);
      int64_t days;
      if (ParseDatePart(body, bc, &days) != body.size() || days < std::numeric_limits<int32_t>::min() ||
          days > std::numeric_limits<int32_t>::max()) {
        return Unreadable("date");
      }
      static_cast<Int32Builder*>(builder)->Append(static_cast<int32_t>(days));
      return Status::OK();
    }
    case PgTextKind::kTimestamp:
    case PgTextKind::kTimestamptz: {
      if (text == "infinity" || text == "-infinity") {
        builder->AppendNull();
        return Status::OK();
      }
      int64_t micros;
      if (!ParseTimestamp(text, mapping.text_kind == PgTextKind::kTimestamptz, &micros)) {
        return Unreadable(mapping.text_kind == PgTextKind::kTimestamptz ? "timestamp with time zone" : "timestamp");
      }
      static_cast<Int64Builder*>(builder)->Append(micros);
      return Status::OK();
    }
    case PgTextKind::kBytea: {
      if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0) return Unreadable("bytea");
      for (size_t i = 2; i < text.size(); ++i) {
        if (HexValue(text[i]) < 0) return Unreadable("bytea");
      }
      uint8_t* out = static_cast<BinaryBuilder*>(builder)->AppendUninitialized(static_cast<int64_t>((text.size() - 2) / 2));
      for (size_t i = 2; i < text.size(); i += 2) {
        *out++ = static_cast<uint8_t>(HexValue(text[i]) * 16 + HexValue(text[i + 1]));
      }
      return Status::OK();
    }
    case PgTextKind::kText:
      static_cast<BinaryBuilder*>(builder)->Append(text);
      return Status::OK();
    case PgTextKind::kArray: return AppendPgArrayText(mapping, text, builder);
  }
  return Unreadable("unknown");
}

}  // namespace sluice::connectors
