// Column projection: which top-level columns, struct fields and leaf column chunks a read needs.
#pragma once

#include <string>
#include <vector>

#include "parquet/schema_conversion.h"

namespace sluice::parquet {

struct Projection {
  TypePtr type;                   // a struct: the projected columns
  std::vector<SchemaNode> nodes;  // one per field of `type`, structs pruned to the requested fields
  std::vector<int> leaves;        // the leaf columns to read, ascending
};

// Resolves `columns` (top-level names or dot paths into structs, back-quoted where a name holds
// a dot; exact match first, then ignoring case) against the file's schema. Every column when
// `columns` is empty. UNRESOLVED_COLUMN names a path that matches nothing, with the names that
// exist where it failed.
Result<Projection> Project(const ParquetSchema& schema, const std::vector<std::string>& columns);

}  // namespace sluice::parquet
