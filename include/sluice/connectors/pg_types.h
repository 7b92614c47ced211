// How PostgreSQL types map to sluice types, and how PostgreSQL's text form of a value is read into
// a column. One mapping serves the change feed, batch reads and the sink's table creation; the
// table in docs/postgres-types.md is its documentation.
//
//   boolean -> boolean            smallint/integer/bigint -> short/integer/long
//   real/double precision -> float/double
//   numeric(p,s), p <= 38 -> decimal(p,s); unbounded, p > 38 or negative scale -> string
//   text/varchar/char/name -> string   json/jsonb -> string (JSON text)   enum -> string (label)
//   date -> date   timestamp -> timestamp_ntz   timestamptz -> timestamp   bytea -> binary
//   anything else (uuid, arrays, ranges, geometry, vector, composite, hstore, ...) -> string in
//   PostgreSQL's text form
//
// The text forms read here are those of a session with DateStyle ISO, bytea_output hex and
// extra_float_digits 3 (what sluice's connections set). Values outside sluice's ranges
// (numeric NaN and ±Infinity, date and timestamp ±infinity) become null, as documented. All
// functions are thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/core/types.h"

namespace sluice::connectors {

namespace pg_oid {
inline constexpr uint32_t kBool = 16, kBytea = 17, kChar = 18, kName = 19, kInt8 = 20, kInt2 = 21, kInt4 = 23,
                          kText = 25, kOid = 26, kJson = 114, kFloat4 = 700, kFloat8 = 701, kBpchar = 1042,
                          kVarchar = 1043, kDate = 1082, kTime = 1083, kTimestamp = 1114, kTimestamptz = 1184,
                          kInterval = 1186, kNumeric = 1700, kUuid = 2950, kJsonb = 3802;
}  // namespace pg_oid

// How a column's text values are read; fixed per column, chosen by MapPgType.
enum class PgTextKind : uint8_t {
  kBool,
  kInt2,
  kInt4,
  kInt8,
  kFloat4,
  kFloat8,
  kNumeric,  // into decimal(p,s)
  kDate,
  kTimestamp,    // without time zone
  kTimestamptz,  // with an offset
  kBytea,
  kText,   // anything kept as its text form
  kArray,  // a one-dimensional array whose elements are read as `element_text_kind`
};

struct PgColumnMapping {
  TypePtr type;
  PgTextKind text_kind;
  PgTextKind element_text_kind = PgTextKind::kText;  // kArray only; never kArray
};

// The oid of the element type of a built-in array type (int4[] -> int4), or 0 when `oid` is not
// one. Arrays of other types (enums, composites, extensions' types) have no fixed oid.
uint32_t PgArrayElementOid(uint32_t array_oid);

// The oid of the array type of a built-in element type (int4 -> int4[]), or 0.
uint32_t PgArrayOidOf(uint32_t element_oid);

// The sluice type of a PostgreSQL column. `typmod` is the attribute's type modifier (-1 when
// none); enums map like text whatever their oid, so `is_enum` says whether the oid is an enum.
PgColumnMapping MapPgType(uint32_t oid, int32_t typmod, bool is_enum = false);

// Appends the value whose PostgreSQL text form is `text` to `builder`, whose type must be the
// mapping's. A text the type cannot hold (for an array: a malformed one, one element that cannot
// be read, or more than one dimension) is INVALID_ARGUMENT naming the value's kind (not the
// value, which may be sensitive); the builder is then unchanged.
Status AppendPgText(const PgColumnMapping& mapping, std::string_view text, ColumnBuilder* builder);


}  // namespace sluice::connectors
