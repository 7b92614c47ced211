// Table maintenance, as Delta's commands do it: OPTIMIZE (small files compacted into larger ones),
// VACUUM (files no version within the retention period needs, deleted) and RESTORE (the table's
// rows made those of an earlier version again).
//
// OPTIMIZE and RESTORE are one commit each. OPTIMIZE changes no row: its adds and removes carry
// dataChange=false, so streaming readers pass its commit over; it reads under WriteSerializable
// isolation (a concurrent removal of a file it compacts fails it with
// DELTA_CONCURRENT_MODIFICATION, concurrent appends commit beside it). VACUUM deletes files and
// records a `VACUUM START` and a `VACUUM END` commit (no data actions) around the deletion.
//
// Functions are thread-safe. Errors besides those of reading and committing the table
// (transaction.h) and of the expressions:
//   DELTA_TABLE_NOT_FOUND                    no table at the path.
//   DELTA_NON_PARTITION_COLUMN_REFERENCE     an OPTIMIZE predicate names a column that is not a
//                                            partition column.
//   DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT  a VACUUM retention below the table's
//                                            delta.deletedFileRetentionDuration, not forced.
//   DELTA_CANNOT_RESTORE_TABLE_VERSION       RESTORE to a version the log cannot rebuild, or
//                                            whose data files were vacuumed.
//   INVALID_ARGUMENT                         ZORDER BY names a partition column (or more than 32);
//   UNRESOLVED_COLUMN / DATATYPE_MISMATCH    ... a column the table lacks, or cannot order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/delta/actions.h"
#include "sluice/expr/expression.h"

namespace sluice::delta {

// The default size OPTIMIZE aims files at; the table property delta.targetFileSize (bytes)
// overrides it.
inline constexpr int64_t kDefaultTargetFileSize = 128LL * 1024 * 1024;

struct OptimizeSpec {
  // Which partitions to compact: a predicate over partition columns only (none: all).
  std::optional<expr::Expression> where = std::nullopt;
  // Files to aim at; 0: delta.targetFileSize, else kDefaultTargetFileSize.
  int64_t target_file_size = 0;
  // ZORDER BY: every file of each chosen partition is rewritten, its rows ordered along a
  // Z-order curve over these columns (each value's rank in the partition, the ranks' bits
  // interleaved), so that files hold narrow ranges of all of them at once and statistics skip
  // more files for filters on any of them. Top-level, non-partition columns of orderable types.
  std::vector<std::string> zorder_by = {};
  expr::SqlOptions sql = {};
};

struct OptimizeResult {
  int64_t version = -1;  // the version committed, or the version read when there was nothing to do
  bool skipped = false;  // no partition had two files to compact (or one with deleted rows)
  int64_t num_files_removed = 0;
  int64_t num_files_added = 0;
  int64_t num_bytes_removed = 0;
  int64_t num_bytes_added = 0;
  int64_t num_partitions_optimized = 0;
  int64_t num_deletion_vectors_removed = 0;  // compacted files whose deleted rows are now gone
};

// Compacts each chosen partition's files smaller than the target (and every file with a deletion
// vector, whose deleted rows the rewrite drops) into files of about the target size: files are
// taken smallest first into bins up to the target, and each bin of more than one file (or of one
// file with deleted rows) is read and written again as one file. Operation OPTIMIZE.
Result<OptimizeResult> Optimize(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                const OptimizeSpec& spec);

// Automatic compaction, for tables whose delta.autoOptimize.autoCompact is `true` (or `auto`):
// after a commit that added files, when a partition it wrote holds at least this many files below
// the target size, the table is optimized (one more commit, OPTIMIZE). Transaction::Commit calls
// it; a failure there (a concurrent writer won) leaves the table as the commit made it.
inline constexpr int kAutoCompactMinFiles = 50;
Status AutoCompact(std::shared_ptr<FileSystem> fs, const std::string& table_path, int64_t version,
                   const std::vector<AddFile>& added);

struct VacuumSpec {
  // Files removed from the table longer ago than this are deleted; none: the table's
  // delta.deletedFileRetentionDuration (default 1 week).
  std::optional<double> retention_hours = std::nullopt;
  // List what would be deleted, delete nothing, commit nothing.
  bool dry_run = false;
  // Allow a retention below delta.deletedFileRetentionDuration (Delta's
  // spark.databricks.delta.retentionDurationCheck.enabled=false).
  bool force = false;
  // Now, in ms since the epoch (tests move it); none: the clock.
  std::optional<int64_t> now_ms = std::nullopt;
};

struct VacuumResult {
  std::vector<std::string> files;  // deleted (or, in a dry run, to delete), absolute, sorted
  int64_t bytes = 0;
};

// Deletes the files under the table's directory (outside `_delta_log` and other directories whose
// name starts with `_` or `.`) that the latest version does not use: files of `remove` tombstones
// deleted from the table before the retention period, and files the log never mentions
// (failed writes) last modified before it. Deletion vector files are treated as their data files.
Result<VacuumResult> Vacuum(std::shared_ptr<FileSystem> fs, const std::string& table_path, const VacuumSpec& spec);

struct RestoreResult {
  int64_t version = -1;           // the version committed
  int64_t restored_version = -1;  // the version whose rows the table got back
  int64_t num_files_removed = 0;
  int64_t num_files_restored = 0;
  int64_t table_size_after_restore = 0;  // bytes
  int64_t num_files_after_restore = 0;
};

// The version RESTORE gives the table back: one of
struct RestoreTarget {
  std::optional<int64_t> version = std::nullopt;
  // the latest version committed at or before this time: ISO-8601 text (`2026-12-05`,
  // `2026-12-05 10:30:00.5`, UTC unless a zone is written), as Spark's TIMESTAMP AS OF takes it.
  // Commit times are those time travel uses (snapshot.h).
  std::optional<std::string> timestamp = std::nullopt;
};

// Makes the table's rows, schema and properties those of the target version in a new commit
// (operation RESTORE): files the latest version has and that one does not are removed, files that
// one has and the latest does not are added again (dataChange=true: a stream reading the table
// sees the change). The protocol is never lowered. INVALID_ARGUMENT unless exactly one target is
// given or for a timestamp that does not parse; DELTA_CANNOT_RESTORE_TABLE_VERSION for a version
// the table does not have (or whose files were vacuumed); DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER /
// _GREATER for a time before the earliest commit kept or after the latest.
Result<RestoreResult> Restore(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                              const RestoreTarget& target);

}  // namespace sluice::delta
