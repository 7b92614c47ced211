// Record assembly: definition and repetition levels back into nested sluice columns.
//
// For a node of the schema tree, its values ("instances") are the leaf entries whose repetition
// level is at most the node's repetition_level (a lower level starts a new value of an
// enclosing list) and whose definition level reaches `exists_at`, the level at which the node
// has a slot at all (0 at the top, the enclosing list's element_definition_level inside a list,
// the parent's own exists_at for struct fields: a null struct row still has a null row in each
// field). An instance is null when its definition level is below the node's definition_level.
// Lists count the instances of their element between their own instances. Each node reads the
// levels of its first leaf; columns of sibling leaves that disagree about the shape are
// PARQUET_CORRUPT_FILE.
#pragma once

#include <vector>

#include "parquet/column_reader.h"
#include "sluice/core/column.h"

namespace sluice::parquet {

// Builds the column of `node` (a top-level field) for `num_rows` rows. `leaves` is indexed by
// leaf index and holds the data of every leaf under `node`; their values are moved out.
Result<ColumnPtr> AssembleColumn(const SchemaNode& node, std::vector<LeafData>& leaves, int64_t num_rows);

}  // namespace sluice::parquet
