// DeltaSource: a Delta table read as a stream: the files of its snapshot at one version, then the
// files its later commits add.
//
// An offset (version, index) names a position: with `snapshot`, the index-th file (by modification
// time, then path, as Spark orders them) of the table's snapshot at `version`, then every commit after `version`, are still to be read;
// without it, the data-change `add` actions of `version` from the index-th on, then those of every
// later version. Offsets only move forward and a range [start, end) is always read the same way,
// so a streaming query can replay a batch after a crash and get the same rows.
//
// Past its snapshot the source is append-only: a commit that removes data-change files (an
// overwrite, a delete, a merge that rewrote files) fails with DELTA_SOURCE_DATA_DELETED, unless the
// options say to pass it over (Spark's ignoreDeletes and skipChangeCommits); or restart from a
// later startingVersion to skip it. Commits without data change (compaction, metadata) are passed
// over, except a change of schema that renames or drops a column (column mapping), which fails
// with DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG as in Spark without a schema
// tracking location: the stream's rows would otherwise change their columns' meaning under it.
// Added and widened columns read on.
//
// A DeltaSource is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

struct SourceOffset {
  int64_t version = 0;
  int64_t index = 0;
  bool snapshot = false;  // index counts the files of the snapshot at `version`

  bool operator==(const SourceOffset&) const = default;
  auto operator<=>(const SourceOffset&) const = default;
};

struct SourceOptions {
  // Where a new stream starts: kSnapshot reads the table's content at its latest version first,
  // then the commits after it (Spark's default); kLatest only the commits made after the source
  // started; kVersion the files added by `starting_version` and every commit after it.
  enum class Start { kSnapshot, kLatest, kVersion };
  Start start = Start::kSnapshot;
  int64_t starting_version = 0;
  // At most this many files per range planned by LatestOffset (at least 1).
  int64_t max_files_per_trigger = 1000;
  // A commit that only removes data (a delete of whole files, a truncation) is passed over; one
  // that removes and adds (a rewrite) still fails.
  bool ignore_deletes = false;
  // Every commit that removes data is passed over whole, the files it adds included (an update,
  // a merge, an overwrite): the stream reads appends only and never sees rewritten rows again.
  bool skip_change_commits = false;
};

// The version of the table's latest commit that removes data, when that commit removes every file
// of the table before it (an overwrite, a change feed's re-snapshot): a stream started there reads
// the table's whole new content. nullopt when no commit still in the log removes data, or when the
// latest one rewrote only part of the table.
Result<std::optional<int64_t>> LastWholeRewrite(const std::shared_ptr<FileSystem>& fs, const std::string& table_path);

class DeltaSource {
 public:
  // DELTA_TABLE_NOT_FOUND when there is no table; DELTA_VERSION_NOT_FOUND when the starting
  // version is past the latest version or its commit was cleaned up.
  static Result<std::unique_ptr<DeltaSource>> Open(std::shared_ptr<FileSystem> fs, std::string table_path,
                                                   SourceOptions options = {});

  // Where reading starts when a query has no checkpointed offset yet.
  const SourceOffset& initial_offset() const { return initial_; }

  // The version the stream's reading started at (its first offset's, as its query recorded it).
  // A commit there that removes every file of the table before it (an overwrite, a change feed's
  // re-snapshot) is read as the adds it makes: the stream never read the files it removes.
  void StartedAt(int64_t version) { started_at_ = version; }

  // The end of the next range from `start`: past at most max_files_per_trigger new files (whole
  // versions are not split needlessly: a range ends at a version boundary or at the file limit).
  // Equal to `start` when nothing new was committed. A range ends before a commit that removes
  // data (unless the options pass it over); DELTA_SOURCE_DATA_DELETED when the range would start
  // at one. DELTA_LOG_CORRUPT when the next version is
  // missing but the one after it, or a checkpoint past it, exists (a hole in the log).
  Result<SourceOffset> LatestOffset(const SourceOffset& start);

  // The files of [start, end), in log order.
  Result<std::vector<AddFile>> Files(const SourceOffset& start, const SourceOffset& end);

  // The rows of [start, end) as batches of the table's schema at `end` (its last version read).
  Result<std::vector<BatchPtr>> Read(const SourceOffset& start, const SourceOffset& end);

 private:
  DeltaSource(std::shared_ptr<FileSystem> fs, std::string table_path, SourceOptions options)
      : fs_(std::move(fs)), table_path_(std::move(table_path)), options_(options) {}
  // The data-change adds of one version, or std::nullopt when the version is not committed yet.
  Result<std::optional<std::vector<AddFile>>> VersionFiles(int64_t version);
  // DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG when the commit `version` (its
  // `actions`) changes the schema by renaming or dropping a column (column mapping), unless the
  // stream starts reading there.
  Status CheckSchemaChange(int64_t version, const std::vector<Action>& actions);
  // The files of the snapshot at `version`, by modification time then path (loaded once per
  // version).
  Result<const std::vector<AddFile>*> SnapshotFiles(int64_t version);
  // DELTA_LOG_CORRUPT when the commit after `missing_version`, or a checkpoint past it, exists:
  // the missing one is a hole, not a commit still to come.
  Status CheckNotAHole(int64_t missing_version);

  std::shared_ptr<FileSystem> fs_;
  std::string table_path_;
  SourceOptions options_;
  SourceOffset initial_;
  std::optional<int64_t> started_at_;
  std::optional<int64_t> snapshot_version_;  // of snapshot_files_
  std::vector<AddFile> snapshot_files_;
};

}  // namespace sluice::delta
