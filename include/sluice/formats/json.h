// JSON payloads described by an inline JSON Schema.
//
// JsonSchemaToType maps a JSON Schema (the subset documented in docs/formats.md: object,
// properties, required, additionalProperties, array/items, the scalar types, string formats
// date and date-time, ["T","null"] and oneOf/anyOf with null, $ref to #/definitions or #/$defs)
// to the struct type its documents decode into. Anything it cannot map exactly (allOf, a oneOf of
// several non-null types, a recursive $ref, a remote $ref) fails with JSON_SCHEMA_INVALID
// naming the JSON pointer of the offending schema, so a stream is refused before data moves.
//
// MakeJsonDecoder decodes JSON documents into any struct type built from boolean, integral,
// float/double, string, date, timestamp, timestamp_ntz, struct, array and map<string,T> types
// (what JsonSchemaToType produces, and more), with Spark's PERMISSIVE semantics:
// - a document that is not JSON, or not an object, becomes a null row (DecodeStats::malformed);
// - a value of the wrong JSON type nulls only that field (DecodeStats::mismatched_fields); a
//   field that may not be null (a `required` one) makes its enclosing struct null instead, and
//   the row malformed when that struct is the document itself;
// - unknown keys are ignored, the last of duplicate keys wins, a missing field is null;
// - a string field accepts any JSON value: a non-string is kept as its compact JSON text.
#pragma once

#include <memory>
#include <string_view>

#include "sluice/core/types.h"
#include "sluice/formats/decoder.h"

namespace sluice::formats {

Result<TypePtr> JsonSchemaToType(std::string_view json_schema);

// Fails with INVALID_ARGUMENT if `type` is not a struct or holds a type JSON cannot carry.
Result<std::unique_ptr<Decoder>> MakeJsonDecoder(TypePtr type);

}  // namespace sluice::formats
