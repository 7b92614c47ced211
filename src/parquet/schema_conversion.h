// The mapping between sluice types and Parquet schemas, in both directions.
//
// Writing (SchemaToParquet) produces the modern form other engines expect: LogicalType plus the
// matching legacy ConvertedType, 3-level LISTs (`<list> (LIST) { repeated group list { element } }`)
// and MAPs (`<map> (MAP) { repeated group key_value { required key; value } }`). The table is in
// docs/parquet.md.
//
// Reading (SchemaFromParquet) accepts that form and the legacy ones other writers produce:
// converted types without logical types, 2-level lists and the other list shapes of the
// backward-compatibility rules in the format's LogicalTypes.md, bare repeated fields (read as
// arrays of required elements), MAP_KEY_VALUE groups. Physical types and annotations sluice has
// no type for (TIME, INTERVAL, FLOAT16, UUID, decimals wider than 38 digits) are read as their
// physical representation (integer, long, binary), so the column stays readable.
//
// Both directions describe the result as a SchemaNode tree shaped like the sluice type, which
// carries the definition and repetition levels the writer shreds with and the reader assembles
// from. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/parquet/metadata.h"

namespace sluice::parquet {

// One leaf column of the Parquet schema: one column chunk per row group.
struct LeafColumn {
  std::vector<std::string> path;  // path_in_schema: the names from below the root to the leaf
  SchemaElement element;          // the leaf's element: physical type and annotations
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
  TypePtr type;  // the sluice type of the leaf's values
};

// One sluice value position: a struct field, an array element, a map key or a map value.
//
// Levels: a leaf value at definition level d is defined down to every node whose
// definition_level <= d. A nullable node is null where the level reached is exactly
// definition_level - 1; lower levels mean an ancestor is null or an enclosing list is empty.
// For arrays and maps, element_definition_level (definition_level + 1) is reached when the
// list holds at least one entry; an empty list stops at definition_level. The children of a
// list have repetition_level one more than the list; a leaf value whose repetition level equals
// a list's child repetition_level continues that list, a lower one starts a new list.
struct SchemaNode {
  std::string name;
  TypePtr type;
  bool nullable = true;
  int16_t definition_level = 0;
  int16_t repetition_level = 0;
  int16_t element_definition_level = 0;  // array and map only
  std::vector<SchemaNode> children;      // struct: fields; array: {element}; map: {key, value}
  int leaf = -1;                         // primitive types: index into ParquetSchema::leaves
};

struct ParquetSchema {
  TypePtr type;                     // a struct type: the file's columns
  std::vector<SchemaNode> fields;   // one per field of `type`
  std::vector<LeafColumn> leaves;   // in schema (and column chunk) order
  std::vector<SchemaElement> elements;  // the flattened Parquet schema, root first
};

// Parquet -> sluice. `elements` is FileMetaData::schema. PARQUET_CORRUPT_FILE when the element
// list is not a well-formed tree (child counts past the end, leaves without a type, groups
// without children counts, LIST/MAP groups of the wrong shape, nesting deeper than 100).
Result<ParquetSchema> SchemaFromParquet(const std::vector<SchemaElement>& elements);

// sluice -> Parquet. `schema` is a struct type; the root element is named `root_name`
// ("spark_schema", as Spark names it). PARQUET_UNSUPPORTED_FEATURE for an empty struct, which
// Parquet cannot represent.
Result<ParquetSchema> SchemaToParquet(const TypePtr& schema, std::string_view root_name = "spark_schema");

// The byte width of the FIXED_LEN_BYTE_ARRAY that holds every unscaled value of a decimal of
// `precision` digits (1..38) in two's complement: 5 for precision 10, 16 for precision 38.
int DecimalByteWidth(int precision);

}  // namespace sluice::parquet
