// Avro: schemas (the JSON text of the Avro specification 1.11) and the binary encoding of single
// datums, as Kafka messages carry them (without the object container file header).
//
// ParseAvroSchema reads schema text into an AvroSchema: a flat table of nodes, named types
// referenced by index. It maps the schema to a sluice type (docs/formats.md):
//   record -> struct (a field is nullable only when its Avro type admits null), enum -> string,
//   array -> array, map -> map<string,T>, fixed/bytes -> binary, int -> integer, long -> long,
//   float, double, boolean, string; ["null",T] -> nullable T; a union of several non-null types ->
//   a struct with one nullable field per branch, named by the branch's name (a record's or
//   enum's or fixed's name, else the primitive type name), exactly one of them set per row;
//   logical types: decimal(p,s) on bytes/fixed -> decimal(p,s), date -> date,
//   timestamp-millis/micros -> timestamp, local-timestamp-millis/micros -> timestamp_ntz,
//   uuid -> string; other logical types decode as their underlying type.
// Schemas that cannot be mapped (a recursive record, a bare "null", a decimal wider than 38
// digits, duplicate names) fail with AVRO_SCHEMA_INVALID naming the place in the schema.
//
// MakeAvroDecoder compiles a schema into a Decoder (decoder.h). A datum that is truncated, has a
// union branch or enum index out of range, a negative length, a decimal wider than 16 bytes, or
// bytes left over after the datum is malformed: its row becomes null and is counted.
//
// AvroSchema is immutable once parsed and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/types.h"
#include "sluice/formats/decoder.h"

namespace sluice::formats {

struct AvroNode {
  enum class Kind : uint8_t { kNull, kBoolean, kInt, kLong, kFloat, kDouble, kBytes, kString, kRecord, kEnum, kArray, kMap, kUnion, kFixed };
  enum class Logical : uint8_t { kNone, kDecimal, kDate, kTimestampMillis, kTimestampMicros, kLocalTimestampMillis, kLocalTimestampMicros, kUuid };
  struct RecordField {
    std::string name;
    int node = -1;
    bool has_default = false;
    std::string default_json;  // the field's "default", as compact JSON text
  };

  Kind kind = Kind::kNull;
  Logical logical = Logical::kNone;
  std::string name;                  // full name of a record, enum or fixed
  int precision = 0;                 // decimal
  int scale = 0;                     // decimal
  int64_t fixed_size = 0;            // fixed
  std::vector<std::string> symbols;  // enum
  std::vector<RecordField> fields;   // record
  std::vector<int> children;         // array: items; map: values; union: branches
};

struct AvroSchema {
  std::vector<AvroNode> nodes;
  int root = 0;
  TypePtr type;  // the sluice type of the root, a struct when the root is a record
};
using AvroSchemaPtr = std::shared_ptr<const AvroSchema>;

// `references` are the texts of schemas whose named types `schema_json` uses without defining
// them (a schema registry's references), dependencies first.
Result<AvroSchemaPtr> ParseAvroSchema(std::string_view schema_json, std::span<const std::string> references = {});

// Decodes datums of `schema` into struct columns: the record's fields when the root is a
// record, otherwise a struct with one field `value` holding the datum.
Result<std::unique_ptr<Decoder>> MakeAvroDecoder(AvroSchemaPtr schema);

// Decodes datums written with `writer` into columns of `reader`'s type, resolving the two as
// the Avro specification says: record fields matched by name (a reader field the writer lacks
// takes its default, which must be null or a scalar; a writer field the reader lacks is
// skipped), int -> long/float/double, long -> float/double, float -> double, string <-> bytes,
// enum symbols by name, unions branch by branch. Schemas that cannot be resolved at all (a
// reader field with neither a writer field nor a default, records of different names, kinds
// that do not promote) fail with AVRO_SCHEMA_INVALID naming the field; a writer union branch
// or enum symbol the reader lacks makes only the datums that use it malformed.
Result<std::unique_ptr<Decoder>> MakeAvroDecoder(AvroSchemaPtr writer, AvroSchemaPtr reader);

// As above for datums that carry no mark of the schema that wrote them (inline schemas, whose
// earlier versions a stream keeps): `writers` newest first, each resolved against `reader`. A
// datum is read with the first writer; one it cannot read to its last byte (a datum written
// before a trailing field was dropped) with each of the others in turn, the first that reads it
// cleanly winning; none: malformed.
Result<std::unique_ptr<Decoder>> MakeAvroDecoder(std::vector<AvroSchemaPtr> writers, AvroSchemaPtr reader);

}  // namespace sluice::formats
