// Spark's implicit type coercion (TypeCoercion, or AnsiTypeCoercion with `ansi`, and
// DecimalPrecision). Internal to expr.
// A null TypePtr stands for Spark's NullType (the type of an untyped NULL literal): it widens
// to any type. All functions are pure.
#pragma once

#include "sluice/core/types.h"

namespace sluice::expr {

// The decimal type an integral type widens to: byte (3,0), short (5,0), int (10,0), long (20,0).
TypePtr DecimalForIntegral(const DataType& type);
// The narrowest decimal holding an integral literal's value: 7 is decimal(1,0), -120 decimal(3,0)
// (Spark's DecimalType.fromLiteral).
TypePtr DecimalForIntegralLiteral(int64_t value);
// Spark's DecimalType.bounded and adjustPrecisionScale (allowPrecisionLoss = true).
TypePtr BoundedDecimal(int precision, int scale);
TypePtr AdjustedDecimal(int precision, int scale);
// Widest decimal holding both: scale max(s1,s2), integer digits max(p1-s1, p2-s2), capped at 38.
TypePtr WiderDecimal(const DataType& a, const DataType& b);

// findTightestCommonType plus decimal widening; nullptr when there is none (and when both are
// the null type: check `a == nullptr && b == nullptr` first). ANSI widens a float with an
// integral type to double (an int does not fit a float exactly).
TypePtr TightestCommonType(const TypePtr& a, const TypePtr& b, bool ansi, bool* ok);
// findWiderTypeForTwo: tightest common type, else, with string promotion, when one side is a
// string and the other atomic: non-ANSI, string (unless the other is binary or boolean); ANSI,
// the other type, bigint for integral types and double for fractional ones. Arrays element-wise.
TypePtr WiderCommonType(const TypePtr& a, const TypePtr& b, bool string_promotion, bool ansi, bool* ok);
// The type both sides of a comparison are cast to (findCommonTypeForBinaryComparison first).
TypePtr ComparisonType(const TypePtr& a, const TypePtr& b, bool ansi, bool* ok);
// Whether `from` may be cast implicitly to `to` (numeric <-> numeric, string -> numeric / date /
// timestamp / boolean, atomic -> string, date <-> timestamp).
bool CanImplicitCast(const TypePtr& from, const TypePtr& to);

bool IsAtomic(const DataType& type);
bool IsDatetime(const DataType& type);
std::string TypeName(const TypePtr& type);  // "void" for the null type

}  // namespace sluice::expr
