// PostgreSQL's binary COPY form of a value, read into a column: the decoding behind batch reads
// (`COPY (query) TO STDOUT (FORMAT binary)`).
//
// Binary values are read for the types whose send form is cheap and fixed: boolean, smallint,
// integer, bigint, real, double precision, numeric(p,s) with p <= 38, date, timestamp,
// timestamptz, bytea, uuid, jsonb, and the types whose send form is their text (text, varchar,
// char(n), name, json, enums). Every other type (arrays, unbounded numeric, intervals, ...) has
// no binary decoding here: the query casts it to text, which gives the same text form as a text
// COPY would (an array's text form is then read into the array column by AppendPgText). Values come out as AppendPgText gives them for the same column: numeric NaN and
// ±Infinity, and date and timestamp ±infinity, become null; timestamps are UTC microseconds.
// All functions are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sluice/connectors/pg_types.h"
#include "sluice/core/builder.h"

namespace sluice::connectors {

// How a column's binary values are read; fixed per column.
enum class PgBinaryKind : uint8_t {
  kBool,
  kInt2,
  kInt4,
  kInt8,
  kFloat4,
  kFloat8,
  kNumeric,    // into decimal(p,s)
  kDate,       // days since 2000-01-01
  kTimestamp,  // microseconds since 2000-01-01, for timestamp and timestamptz alike
  kBytes,      // the bytes as sent: bytea, and the types sent as their text
  kJsonb,      // a version byte (1), then the JSON text
  kUuid,       // 16 bytes, read as the 36-character text form
};

// The binary decoding of a column of type `oid` mapped as `mapping` (MapPgType), or nullopt when
// the column must be read as text (cast to text in the query).
std::optional<PgBinaryKind> PgBinaryKindFor(uint32_t oid, bool is_enum, const PgColumnMapping& mapping);

// The bytes one value of `kind` takes in a column (its physical type's size), or 0 for the
// variable-width kinds (kBytes, kJsonb, kUuid).
int PgBinaryWidth(PgBinaryKind kind);

// Decodes the value of a fixed-width kind whose send form is `bytes` into `out`
// (PgBinaryWidth(kind) bytes, the column's physical type). A value the column holds as null
// (numeric NaN, ±infinity) sets `*is_null` and writes zero. Errors as AppendPgBinary's.
Status DecodePgBinaryFixed(PgBinaryKind kind, int scale, std::string_view bytes, uint8_t* out, bool* is_null);

// Appends the value whose binary send form is `bytes` (without its length word) to `builder`,
// whose type must be the mapping's; `scale` is the decimal's scale for kNumeric. Bytes of the
// wrong length or out of the type's range are INVALID_ARGUMENT naming the kind (not the value);
// the builder is then unchanged.
Status AppendPgBinary(PgBinaryKind kind, int scale, std::string_view bytes, ColumnBuilder* builder);

}  // namespace sluice::connectors
