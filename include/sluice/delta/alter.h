// ALTER TABLE for Delta tables: changes of a table's properties and columns, each one commit of
// new metadata that rewrites no data file, under Delta Spark's operation names (what `sluice delta
// history` shows):
//
//   SetTableProperties    SET TBLPROPERTIES    properties added or replaced
//   UnsetTableProperties  UNSET TBLPROPERTIES  properties removed
//   RenameColumn          RENAME COLUMN        a column, at any depth, under a new name
//   DropColumns           DROP COLUMNS         columns, at any depth, gone from the schema
//   AddColumns            ADD COLUMNS          new nullable columns, at any depth, at a position
//   ChangeColumn          CHANGE COLUMN        a column's type widened, comment, nullability or
//                                              position changed
//
// Properties: any name outside `delta.`; of `delta.` the ones sluice implements (the list in the
// refusal's message and docs/delta.md), else DELTA_UNKNOWN_CONFIGURATION. Setting one raises the
// protocol to the features the metadata then uses: `delta.columnMapping.mode` = `name` maps an
// unmapped table's columns in place (each keeps its name as its physical name and gets an id, so
// every file reads as before; the columnMapping feature), `delta.enableDeletionVectors` = `true`
// adds deletionVectors, `delta.checkpointPolicy` = `v2` adds v2Checkpoint, `delta.appendOnly` the
// appendOnly writer feature. `delta.minReaderVersion` (1 or 2) and `delta.minWriterVersion` (2 to
// 5) raise a table's legacy protocol versions, as Delta's column mapping recipe sets them; they
// are not stored as properties. A column mapping mode can only go from none to name
// (DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE otherwise); `delta.columnMapping.maxColumnId` and
// row tracking's column names are the table's own (DELTA_CANNOT_MODIFY_TABLE_PROPERTY); row
// tracking cannot be enabled on an existing table (DELTA_PROTOCOL_UNSUPPORTED).
//
// Columns are named by dot paths of logical names (matched ignoring case, a part in backticks when
// it holds a dot). Renaming and dropping need column mapping (DELTA_UNSUPPORTED_RENAME_COLUMN,
// DELTA_UNSUPPORTED_DROP_COLUMN: enable it first); a partition column may be renamed, not dropped
// (DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN); a table or struct keeps at least one column
// (DELTA_UNSUPPORTED_DROP_COLUMN); a new name taken by a sibling is DELTA_SCHEMA_MISMATCH, a path
// that names no column UNRESOLVED_COLUMN.
//
// Adding and changing columns needs no column mapping (columns are matched by name in files). A
// new column is nullable (NOT NULL is DELTA_OPERATION_NOT_ALLOWED, as in Delta: older files have
// no value for it); a name its struct has already is FIELD_ALREADY_EXISTS; a parent that is not a
// struct INVALID_FIELD_NAME. A type may only be widened (delta/type_widening.h: integers to wider
// integers, to double or to a decimal with room for them, float to double, a decimal to a wider
// one) and only on a table with `delta.enableTypeWidening` = `true`, which then records the change
// in the column's `delta.typeChanges` and takes the typeWidening feature; older files are widened
// as they are read. A widening on a table without the property, or a numeric change Delta does
// not widen (long to double), is DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP; any other change of
// type NOT_SUPPORTED_CHANGE_COLUMN. A nullable column cannot be made NOT NULL
// (DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP); the other way always works.
//
// Every change reads the latest version and commits the next; a concurrent commit that changed
// the metadata or protocol fails it with DELTA_CONCURRENT_MODIFICATION (MetadataChanged). Also
// DELTA_TABLE_NOT_FOUND and IO errors. Thread-safe; each call is one commit.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

// Each returns the version committed.
Result<int64_t> SetTableProperties(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                   const StringMap& properties);
// A property the table does not have is INVALID_ARGUMENT unless `if_exists`.
Result<int64_t> UnsetTableProperties(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                     const std::vector<std::string>& names, bool if_exists);
Result<int64_t> RenameColumn(std::shared_ptr<FileSystem> fs, const std::string& table_path, const std::string& column,
                             const std::string& new_name);
Result<int64_t> DropColumns(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                            const std::vector<std::string>& columns);

// Where a column goes among the fields of its struct.
struct ColumnPosition {
  enum class Kind { kLast, kFirst, kAfter };
  Kind kind = Kind::kLast;
  std::string after = {};  // kAfter: the sibling it follows (UNRESOLVED_COLUMN when there is none)
};

// A column ADD COLUMNS adds: `path` is a dot path whose last name is new and whose others name a
// struct column.
struct NewColumn {
  std::string path;
  TypePtr type;
  bool nullable = true;
  std::string comment = {};  // none when empty
  ColumnPosition position = {};
};

// What CHANGE COLUMN changes of one column; what is unset stays.
struct ColumnChange {
  TypePtr type = nullptr;
  std::optional<std::string> comment = std::nullopt;
  std::optional<bool> nullable = std::nullopt;  // true: DROP NOT NULL; false: SET NOT NULL
  std::optional<ColumnPosition> position = std::nullopt;
};

// The columns are added in order, each at its position; one commit.
Result<int64_t> AddColumns(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                           const std::vector<NewColumn>& columns);
// INVALID_ARGUMENT when `change` changes nothing.
Result<int64_t> ChangeColumn(std::shared_ptr<FileSystem> fs, const std::string& table_path, const std::string& column,
                             const ColumnChange& change);

}  // namespace sluice::delta
