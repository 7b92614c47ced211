// JSON payloads described by an inline JSON Schema.
//
// JsonSchemaToType maps a JSON Schema (the subset documented in docs/formats.md: object,
// properties, required, additionalProperties, array/items, the scalar types, string formats
// date and date-time, ["T","null"] and oneOf/anyOf with null, $ref to #/definitions or #/$defs)
// to the struct type its documents decode into. Anything it cannot map exactly (allOf, a oneOf of
// several non-null types, a recursive $ref, a remote $ref) fails with JSON_SCHEMA_INVALID
// naming the JSON pointer of the offending schema, so a stream is refused before data moves.
//
// MakeJsonDecoder decodes JSON documents into a struct type with the JSON reader of core
// (core/json_reader.h: Spark's conversions and PERMISSIVE semantics): a document that is not a
// JSON object becomes a null row (DecodeStats::malformed); a value of the wrong JSON type nulls
// its field (DecodeStats::mismatched_fields), or, for a field that may not be null (a `required`
// one), its enclosing struct, and the row when that struct is the document itself.
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
