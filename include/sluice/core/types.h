// The sluice type system, named as Spark SQL and Delta name their types.
//
// A DataType is immutable and shared (TypePtr); build one with the factory functions below. A
// schema is a struct type: RecordBatch::schema() is a TypePtr whose id() is kStruct.
// All functions here are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice {

enum class TypeId : uint8_t {
  kBoolean,       // 1 byte per value, 0 or 1
  kByte,          // int8_t
  kShort,         // int16_t
  kInteger,       // int32_t
  kLong,          // int64_t
  kFloat,         // float
  kDouble,        // double
  kDecimal,       // __int128 unscaled value, precision 1..38, 0 <= scale <= precision
  kString,        // UTF-8 bytes, int64 offsets
  kBinary,        // bytes, int64 offsets
  kDate,          // int32_t days since 1970-01-01
  kTimestamp,     // int64_t microseconds since the Unix epoch, UTC
  kTimestampNtz,  // int64_t microseconds since 1970-01-01T00:00, no time zone
  kStruct,        // children, one per field
  kArray,         // int64 offsets + one child (elements)
  kMap,           // int64 offsets + two children (keys, values)
};

__extension__ typedef __int128 int128_t;  // __extension__: -Wpedantic knows no 128-bit integers

class DataType;
using TypePtr = std::shared_ptr<const DataType>;

struct Field {
  std::string name;
  TypePtr type;
  bool nullable = true;
  // Spark field metadata: a JSON object, kept as its compact text ("{}" when empty).
  std::string metadata = "{}";

  bool operator==(const Field& other) const;
};

class DataType {
 public:
  static TypePtr Boolean();
  static TypePtr Byte();
  static TypePtr Short();
  static TypePtr Integer();
  static TypePtr Long();
  static TypePtr Float();
  static TypePtr Double();
  static TypePtr String();
  static TypePtr Binary();
  static TypePtr Date();
  static TypePtr Timestamp();
  static TypePtr TimestampNtz();
  // Fails with INVALID_DATA_TYPE unless 1 <= precision <= 38 and 0 <= scale <= precision.
  static Result<TypePtr> Decimal(int precision, int scale);
  // Field names must be unique (case-sensitively) and non-empty, or INVALID_SCHEMA.
  static Result<TypePtr> Struct(std::vector<Field> fields);
  static TypePtr Array(TypePtr element, bool contains_null = true);
  static TypePtr Map(TypePtr key, TypePtr value, bool value_contains_null = true);

  TypeId id() const { return id_; }
  bool is_nested() const { return id_ == TypeId::kStruct || id_ == TypeId::kArray || id_ == TypeId::kMap; }
  bool is_integral() const;   // byte, short, integer, long
  bool is_numeric() const;    // integral, float, double, decimal
  bool is_binary_like() const { return id_ == TypeId::kString || id_ == TypeId::kBinary; }
  // Bytes per value in the values buffer of a fixed-width type; 0 for string, binary and nested.
  int byte_width() const;

  int precision() const { return precision_; }  // decimal only
  int scale() const { return scale_; }          // decimal only

  const std::vector<Field>& fields() const { return fields_; }  // struct only
  int num_fields() const { return static_cast<int>(fields_.size()); }
  const Field& field(int i) const { return fields_[i]; }
  // Index of the field named exactly `name`, or -1.
  int FieldIndex(std::string_view name) const;
  // Index of the field whose name equals `name` ignoring ASCII case (Spark's default resolution);
  // -1 when there is none, -2 when several match.
  int FieldIndexIgnoreCase(std::string_view name) const;

  const TypePtr& element_type() const { return element_; }  // array only
  bool contains_null() const { return contains_null_; }     // array only
  const TypePtr& key_type() const { return element_; }      // map only
  const TypePtr& value_type() const { return value_; }      // map only
  bool value_contains_null() const { return contains_null_; }  // map only

  // Spark's simpleString: "int", "decimal(10,2)", "struct<a:int,b:array<string>>".
  std::string ToString() const;
  // Spark's JSON form: "integer", {"type":"struct","fields":[...]} (the Delta schemaString format).
  std::string ToJson() const;

  bool Equals(const DataType& other) const;
  bool operator==(const DataType& other) const { return Equals(other); }

 private:
  explicit DataType(TypeId id) : id_(id) {}

  TypeId id_;
  int precision_ = 0;
  int scale_ = 0;
  bool contains_null_ = true;
  TypePtr element_;
  TypePtr value_;
  std::vector<Field> fields_;
};

// Parses Spark's JSON form of a type (a StructType JSON document for schemas). Errors are
// INVALID_SCHEMA with the JSON path of the offending element.
Result<TypePtr> ParseTypeJson(std::string_view json);

// Parses Spark's simple/DDL-ish type strings: "int", "bigint", "decimal(10,2)", "array<string>",
// "map<string,int>", "struct<a:int,`b c`:string>". Names are case-insensitive; Spark's aliases
// (int/integer, bigint/long, smallint/short, tinyint/byte, real/float) are accepted.
Result<TypePtr> ParseTypeString(std::string_view text);

std::string_view TypeIdName(TypeId id);

// The type with every field, element and map value nullable (Spark's asNullable).
TypePtr AsNullable(const TypePtr& type);
// Whether two types are equal once both are made nullable throughout.
bool EqualsIgnoringNullability(const TypePtr& a, const TypePtr& b);

// The parts of a dot path to a nested field (`value.card.number` -> value, card, number). Empty
// parts are kept (`a..b` has three), for the caller to refuse.
std::vector<std::string> SplitFieldPath(std::string_view path);

}  // namespace sluice
