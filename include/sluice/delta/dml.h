// MERGE, UPDATE and DELETE on a Delta table, with Delta's semantics (expr/dml.h has the
// statements' syntax). Each is one commit. A data file holding a changed row is either rewritten
// without it (copy-on-write: removed, its other rows written to a new file) or, when the table's
// delta.enableDeletionVectors is true and its protocol has the deletionVectors feature, left in
// place with a deletion vector marking the row (deletion_vector.h); updated and inserted rows go
// to new files. A crash before the commit leaves orphan files only.
//
// Which files are read: those whose partition values and statistics do not rule out a row that
// could change (each join key on a plain column of the table against the source's values of that
// key, and the ON condition's target-only conjuncts; the WHERE of UPDATE/DELETE; the conditions of WHEN NOT
// MATCHED BY SOURCE clauses). A file none of whose rows changes is not rewritten.
//
// Names in conditions and values are Spark SQL's: a column is named by itself when only one of
// the tables has it, else qualified by the table's alias (`t.id = s.id`). Concurrency follows
// Delta's WriteSerializable isolation (transaction.h): a concurrent blind append commits beside
// a DML commit; a concurrent removal of a file it read, or a concurrent DML commit adding files,
// fails it with DELTA_CONCURRENT_MODIFICATION and nothing is written.
//
// Functions are thread-safe; errors are those of the expressions (expr/expression.h: binding and,
// in ANSI mode, evaluation), of reading and writing the table (writer.h), and:
//   DELTA_TABLE_NOT_FOUND     no table at the path.
//   UNRESOLVED_COLUMN         an assigned column is not in the table, or UPDATE SET * / INSERT *
//                             finds no source column for a table column (without schema evolution).
//   DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE  see MergeInto.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/delta/actions.h"
#include "sluice/expr/dml.h"
#include "sluice/expr/expression.h"

namespace sluice::delta {

struct DmlResult {
  int64_t version = -1;  // the version committed, or the version read when skipped
  bool skipped = false;  // every transaction was already recorded: nothing was done
  int64_t num_source_rows = 0;
  int64_t num_rows_inserted = 0;
  int64_t num_rows_updated = 0;
  int64_t num_rows_deleted = 0;
  int64_t num_rows_copied = 0;  // unchanged rows rewritten because their file held a changed row
  int64_t num_files_added = 0;
  int64_t num_files_removed = 0;
  int64_t num_deletion_vectors_added = 0;  // files left in place with more of their rows deleted
  int64_t num_files_scanned = 0;  // the files read: those partition values and statistics did not rule out
  int64_t num_files_total = 0;    // the table's files before skipping
};

struct MergeSpec {
  // The tables' aliases (empty: none), by which conditions and values qualify column names.
  std::string target_alias = {};
  std::string source_alias = {};
  expr::Expression on = expr::Expression(nullptr);
  std::vector<expr::MergeClause> clauses = {};  // in order; expr::CheckMergeClauses's rules
  // WITH SCHEMA EVOLUTION: source columns the table lacks are added to it when an UPDATE SET *
  // or INSERT * clause exists; those clauses then leave the table's columns the source lacks as
  // they are (update) or NULL (insert).
  bool merge_schema = false;
  // Recorded with the commit; when the table records every one of them already, nothing is done
  // (a replayed streaming batch applies its MERGE once).
  std::vector<SetTransaction> transactions = {};
  expr::SqlOptions sql = {};
};

// Merges the rows of `source` (batches of one schema; at least one, possibly empty) into the
// table. A target row paired by the ON condition with a source row takes the first WHEN MATCHED
// clause whose condition holds (none: unchanged); a source row paired with no target row is
// inserted by the first WHEN NOT MATCHED clause whose condition holds; a target row paired with
// no source row takes the first WHEN NOT MATCHED BY SOURCE clause whose condition holds.
// DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE when WHEN MATCHED clauses exist and a
// target row pairs with more than one source row (counting, when there are only WHEN MATCHED
// clauses, the pairs some clause's condition accepts), unless the only WHEN MATCHED clause is an
// unconditional DELETE. Values are cast to their column's type as an INSERT would cast them.
Result<DmlResult> MergeInto(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                            const std::vector<BatchPtr>& source, const MergeSpec& spec);

struct UpdateSpec {
  std::string target_alias = {};
  std::vector<expr::Assignment> assignments = {};
  std::optional<expr::Expression> where = std::nullopt;  // none: every row
  std::vector<SetTransaction> transactions = {};
  expr::SqlOptions sql = {};
};
// Sets the assigned columns of the rows WHERE holds (commit operation UPDATE).
Result<DmlResult> UpdateTable(std::shared_ptr<FileSystem> fs, const std::string& table_path, const UpdateSpec& spec);

struct DeleteSpec {
  std::string target_alias = {};
  std::optional<expr::Expression> where = std::nullopt;  // none: every row
  std::vector<SetTransaction> transactions = {};
  expr::SqlOptions sql = {};
};
// Deletes the rows WHERE holds (commit operation DELETE).
Result<DmlResult> DeleteFromTable(std::shared_ptr<FileSystem> fs, const std::string& table_path, const DeleteSpec& spec);

}  // namespace sluice::delta
