// Column mapping (PROTOCOL.md, "Column Mapping"): a table whose `delta.columnMapping.mode` is
// `name` or `id` gives every field, at every depth, an id (`delta.columnMapping.id`) and a
// physical name (`delta.columnMapping.physicalName`) in its schema metadata. Data files, their
// statistics and `add.partitionValues` use the physical names; schemas, partitionColumns and
// everything users see the logical ones. So a column may be named anything, and renamed or dropped
// without rewriting a file.
//
// sluice reads both modes and writes both: physical names in Parquet (and the ids as Parquet field
// ids, which id-mode readers resolve columns by), in the statistics and in partition values, and
// files under random two-character folders as Spark writes them (partition folders would carry
// names). Columns are resolved in data files by physical name in both modes; the tables sluice
// and Spark write carry both. A new table gets `name` mode by itself when a column name holds a
// character that unmapped tables cannot name (" ,;{}()\n\t=.").
//
// Internal to the delta layer; pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

enum class ColumnMappingMode { kNone, kName, kId };

inline constexpr std::string_view kColumnMappingMode = "delta.columnMapping.mode";
inline constexpr std::string_view kColumnMappingMaxId = "delta.columnMapping.maxColumnId";

// The table's mode; DELTA_PROTOCOL_UNSUPPORTED for a mode the protocol does not define.
Result<ColumnMappingMode> MappingModeOf(const Metadata& metadata);

// Whether a column name at any depth holds a character a table without column mapping cannot
// name (Parquet and statistics paths, where readers such as Spark refuse them).
bool NeedsColumnMapping(const DataType& schema);

// The name of the field in data files, statistics and partition values: its physical name when
// it has one, else its name.
std::string PhysicalName(const Field& field);

// The schema as data files hold it: every field named by its physical name, at every depth; with
// `field_ids`, fields with a column id carry it as Parquet's field id (`parquet.field.id`).
TypePtr PhysicalSchema(const TypePtr& schema, bool field_ids);

// The schema without the column mapping metadata: what readers of the table see (Spark drops it
// too). The same pointer when there is none.
TypePtr WithoutColumnMapping(const TypePtr& schema);

// The physical names along a path of logical names (matched ignoring case); nullopt when the path
// does not name a field.
std::optional<std::vector<std::string>> PhysicalPath(const TypePtr& schema, const std::vector<std::string>& path);

// The column as `type`, which must have the column's layout and differ only in field names and
// metadata. Shares the values; INTERNAL_ERROR for another layout.
Result<ColumnPtr> Relabel(const ColumnPtr& column, const TypePtr& type);

// The first column of `before` (its dot path of names) that `after` renamed or dropped, the
// columns matched by their column ids at any depth; nullopt when each column of `before` with an
// id is in `after` under its name (columns added or widened change nothing). A schema without
// column mapping has no ids, so nothing in it is compared.
std::optional<std::string> RenamedOrDroppedColumn(const DataType& before, const DataType& after);

// Prepares metadata a commit sets (a new table's, or a changed schema's) and returns its schema:
// with column mapping, every field without an id gets the id and physical name of the field of the
// same path in `previous` (the schema read; null for a new table) or else a new id above
// delta.columnMapping.maxColumnId and a physical name `col-<uuid>`, and maxColumnId is raised;
// a new table whose names need mapping gets mode `name`. Without it, stray mapping metadata is
// dropped. DELTA_PROTOCOL_UNSUPPORTED for an unknown mode or when mapping would have to start on
// an existing table.
Result<TypePtr> ApplyColumnMapping(Metadata* metadata, const TypePtr& previous);

}  // namespace sluice::delta
