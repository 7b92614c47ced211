// The rules of `sluice stream update`: which changes of a live stream's definition are allowed.
//
// Only `schema_config` and `excluded_columns` may change; anything else is
// STREAM_UPDATE_NOT_ALLOWED naming the key. A key or value schema may only change in a backward
// compatible way (records written with the old schema still decode with the new one, and the
// ingestion table keeps its columns), else STREAM_SCHEMA_INCOMPATIBLE naming the field:
//
//   JSON       add nullable fields (at the end), remove fields, widen integer -> long
//   Protobuf   add fields, remove fields, widen integer -> long keeping the field's wire
//              encoding (int32 -> int64, sint32 -> sint64), reorder fields
//   Avro       widen int -> long, remove trailing fields
//
// In every format a field keeps its place among the remaining ones (Protobuf excepted), its type
// (nested structs, arrays and maps by the same rules) and its nullability may only be relaxed. A
// part cannot gain, lose or change the kind of its schema (none, inline, registry) nor its format;
// a registry schema may change its options (the registry enforces its subject's compatibility).
//
// Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>

#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/formats/decoder.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::pipeline {

// The rule for the decoded types of one part (`path` is "key" or "value").
Status CheckTypeEvolution(formats::SchemaFormat format, const TypePtr& before, const TypePtr& after,
                          const std::string& path);

// `after` as an update of `before` (same name): every rule above, schemas compiled to compare
// their decoded types (a schema's own errors if the new one does not compile).
Status CheckStreamUpdate(const StreamSpec& before, const StreamSpec& after);

}  // namespace sluice::pipeline
