// ALTER TABLE for Delta tables: changes of a table's properties and columns, each one commit of
// new metadata that rewrites no data file, under Delta Spark's operation names (what `sluice delta
// history` shows):
//
//   SetTableProperties    SET TBLPROPERTIES    properties added or replaced
//   UnsetTableProperties  UNSET TBLPROPERTIES  properties removed
//   RenameColumn          RENAME COLUMN        a column, at any depth, under a new name
//   DropColumns           DROP COLUMNS         columns, at any depth, gone from the schema
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
// Every change reads the latest version and commits the next; a concurrent commit that changed
// the metadata or protocol fails it with DELTA_CONCURRENT_MODIFICATION (MetadataChanged). Also
// DELTA_TABLE_NOT_FOUND and IO errors. Thread-safe; each call is one commit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
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

}  // namespace sluice::delta
