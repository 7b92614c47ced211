#include "expr/coercion.h"

#include <algorithm>

#include "sluice/core/ascii.h"

namespace sluice::expr {
namespace {

// Spark's numericPrecedence for the non-decimal numeric types.
int NumericRank(TypeId id) {
  switch (id) {
    case TypeId::kByte: return 0;
    case TypeId::kShort: return 1;
    case TypeId::kInteger: return 2;
    case TypeId::kLong: return 3;
    case TypeId::kFloat: return 4;
    case TypeId::kDouble: return 5;
    default: return -1;
  }
}

TypePtr RankType(int rank) {
  switch (rank) {
    case 0: return DataType::Byte();
    case 1: return DataType::Short();
    case 2: return DataType::Integer();
    case 3: return DataType::Long();
    case 4: return DataType::Float();
    default: return DataType::Double();
  }
}

}  // namespace

bool IsAtomic(const DataType& type) { return !type.is_nested(); }
bool IsDatetime(const DataType& type) {
  return type.id() == TypeId::kDate || type.id() == TypeId::kTimestamp || type.id() == TypeId::kTimestampNtz;
}

std::string TypeName(const TypePtr& type) { return type == nullptr ? "void" : type->ToString(); }

TypePtr DecimalForIntegral(const DataType& type) {
  switch (type.id()) {
    case TypeId::kByte: return BoundedDecimal(3, 0);
    case TypeId::kShort: return BoundedDecimal(5, 0);
    case TypeId::kInteger: return BoundedDecimal(10, 0);
    default: return BoundedDecimal(20, 0);
  }
}

TypePtr DecimalForIntegralLiteral(int64_t value) {
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  int digits = 1;
  while (magnitude >= 10) magnitude /= 10, ++digits;
  return BoundedDecimal(digits, 0);
}

TypePtr BoundedDecimal(int precision, int scale) {
  int s = std::min(scale, 38);
  int p = std::clamp(precision, 1, 38);
  return *DataType::Decimal(std::max(p, s), s);
}

TypePtr AdjustedDecimal(int precision, int scale) {
  if (precision <= 38) return BoundedDecimal(precision, scale);
  int int_digits = precision - scale;
  int min_scale = std::min(scale, 6);
  int adjusted = std::max(38 - int_digits, min_scale);
  return BoundedDecimal(38, adjusted);
}

TypePtr WiderDecimal(const DataType& a, const DataType& b) {
  int scale = std::max(a.scale(), b.scale());
  int range = std::max(a.precision() - a.scale(), b.precision() - b.scale());
  return BoundedDecimal(range + scale, scale);
}

TypePtr TightestCommonType(const TypePtr& a, const TypePtr& b, bool ansi, bool* ok) {
  *ok = true;
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  if (a->Equals(*b)) return a;
  int ra = NumericRank(a->id()), rb = NumericRank(b->id());
  if (ansi && std::min(ra, rb) >= 0 && std::min(ra, rb) <= NumericRank(TypeId::kLong) &&
      std::max(ra, rb) == NumericRank(TypeId::kFloat)) {
    return DataType::Double();
  }
  if (ra >= 0 && rb >= 0) return RankType(std::max(ra, rb));
  bool da = a->id() == TypeId::kDecimal, db = b->id() == TypeId::kDecimal;
  if (da && db) return WiderDecimal(*a, *b);
  if (da || db) {
    const TypePtr& dec = da ? a : b;
    const TypePtr& other = da ? b : a;
    if (other->is_integral()) return WiderDecimal(*dec, *DecimalForIntegral(*other));
    if (other->id() == TypeId::kFloat || other->id() == TypeId::kDouble) return DataType::Double();
  }
  auto is_ts = [](const DataType& t) { return t.id() == TypeId::kTimestamp || t.id() == TypeId::kTimestampNtz; };
  if (IsDatetime(*a) && IsDatetime(*b)) {
    if (a->id() == TypeId::kTimestamp || b->id() == TypeId::kTimestamp) return DataType::Timestamp();
    if (is_ts(*a) || is_ts(*b)) return DataType::TimestampNtz();
  }
  // Nested types of one shape: their parts' tightest types, nullable where either side is.
  if (a->id() == TypeId::kArray && b->id() == TypeId::kArray) {
    TypePtr element = TightestCommonType(a->element_type(), b->element_type(), ansi, ok);
    if (*ok) return DataType::Array(element, a->contains_null() || b->contains_null());
  }
  if (a->id() == TypeId::kMap && b->id() == TypeId::kMap) {
    TypePtr key = TightestCommonType(a->key_type(), b->key_type(), ansi, ok);
    TypePtr value = *ok ? TightestCommonType(a->value_type(), b->value_type(), ansi, ok) : nullptr;
    if (*ok) return DataType::Map(key, value, a->value_contains_null() || b->value_contains_null());
  }
  if (a->id() == TypeId::kStruct && b->id() == TypeId::kStruct && a->fields().size() == b->fields().size()) {
    std::vector<Field> fields;
    for (size_t i = 0; i < a->fields().size() && *ok; ++i) {
      const Field& fa = a->fields()[i];
      const Field& fb = b->fields()[i];
      *ok = EqualsIgnoreCase(fa.name, fb.name);
      if (*ok) fields.push_back(Field{fa.name, TightestCommonType(fa.type, fb.type, ansi, ok), fa.nullable || fb.nullable});
    }
    if (*ok) {
      Result<TypePtr> merged = DataType::Struct(std::move(fields));
      if (merged.ok()) return *merged;
    }
  }
  *ok = false;
  return nullptr;
}

TypePtr WiderCommonType(const TypePtr& a, const TypePtr& b, bool string_promotion, bool ansi, bool* ok) {
  TypePtr t = TightestCommonType(a, b, ansi, ok);
  if (*ok) return t;
  *ok = true;
  if (string_promotion && ansi) {
    for (const auto& [text, other] : {std::pair{a, b}, std::pair{b, a}}) {
      if (text->id() != TypeId::kString || !IsAtomic(*other)) continue;
      if (other->is_integral()) return DataType::Long();
      if (other->is_numeric()) return DataType::Double();
      return other;
    }
  }
  if (string_promotion && !ansi) {
    auto promotable = [](const DataType& t) {
      return IsAtomic(t) && t.id() != TypeId::kBinary && t.id() != TypeId::kBoolean;
    };
    if (a->id() == TypeId::kString && promotable(*b)) return a;
    if (b->id() == TypeId::kString && promotable(*a)) return b;
  }
  if (a->id() == TypeId::kArray && b->id() == TypeId::kArray) {
    TypePtr element = WiderCommonType(a->element_type(), b->element_type(), string_promotion, ansi, ok);
    if (*ok) return DataType::Array(element, a->contains_null() || b->contains_null());
  }
  *ok = false;
  return nullptr;
}

TypePtr ComparisonType(const TypePtr& a, const TypePtr& b, bool ansi, bool* ok) {
  *ok = true;
  if (a != nullptr && b != nullptr && !a->Equals(*b)) {
    bool sa = a->id() == TypeId::kString, sb = b->id() == TypeId::kString;
    if (sa != sb) {
      const TypePtr& other = sa ? b : a;
      if (IsDatetime(*other)) return other;
      if (other->id() == TypeId::kDecimal) return DataType::Double();
      if (IsAtomic(*other)) return other;
    }
  }
  return TightestCommonType(a, b, ansi, ok);
}

bool CanImplicitCast(const TypePtr& from, const TypePtr& to) {
  if (from == nullptr) return true;
  if (from->Equals(*to)) return true;
  if (from->is_numeric() && to->is_numeric()) return true;
  if (from->id() == TypeId::kString) {
    return to->is_numeric() || IsDatetime(*to) || to->id() == TypeId::kBoolean || to->id() == TypeId::kBinary;
  }
  if (to->id() == TypeId::kString) return IsAtomic(*from) && from->id() != TypeId::kBinary;
  if (IsDatetime(*from) && IsDatetime(*to)) return true;
  return false;
}

}  // namespace sluice::expr
