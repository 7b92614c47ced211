// Snapshot: the state of a Delta table at one version, reconstructed from its log
// (PROTOCOL.md, "Action Reconciliation").
//
// Loading starts from the newest usable checkpoint (found through `_last_checkpoint`, which may be
// missing or stale, or by listing the log) and replays the JSON commits after it. The result
// holds the last protocol and metaData, the live files keyed by (path, deletion vector id), the
// tombstones, the latest txn per appId and the live domain metadata.
//
// A Snapshot is immutable and safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/types.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

struct SnapshotOptions {
  // Time travel: the table as of this version...
  std::optional<int64_t> version = std::nullopt;
  // ...or as of the latest commit made at or before this time (ms since the epoch). Commit times
  // are the commit files' modification times, made strictly increasing as Spark does.
  std::optional<int64_t> timestamp_ms = std::nullopt;
};

class Snapshot;
using SnapshotPtr = std::shared_ptr<const Snapshot>;

class Snapshot {
 public:
  // Errors: DELTA_TABLE_NOT_FOUND when `table_path` has no log; DELTA_VERSION_NOT_FOUND when the
  // requested version or time is not (or no longer) reconstructible; DELTA_LOG_CORRUPT when the
  // log is malformed (a commit that does not parse or is empty, a commit missing between the
  // checkpoint and the version: a hole); DELTA_PROTOCOL_UNSUPPORTED when the table needs a reader feature sluice
  // lacks; IO errors of the file system.
  static Result<SnapshotPtr> Load(std::shared_ptr<FileSystem> fs, std::string table_path,
                                  const SnapshotOptions& options = {});

  const std::shared_ptr<FileSystem>& file_system() const { return fs_; }
  const std::string& table_path() const { return table_path_; }
  int64_t version() const { return version_; }
  const Protocol& protocol() const { return protocol_; }
  const Metadata& metadata() const { return metadata_; }
  // The table schema (a struct), parsed from metadata().schema_string, with its column mapping
  // metadata when the table maps columns (none otherwise); ScannedSchema (scan.h) is what reading
  // the table gives.
  const TypePtr& schema() const { return schema_; }

  // Live files, ordered by path.
  const std::vector<AddFile>& files() const { return files_; }
  // Removed files still kept as tombstones, ordered by path.
  const std::vector<RemoveFile>& tombstones() const { return tombstones_; }
  // The latest txn version recorded for `app_id`, if any.
  std::optional<int64_t> TransactionVersion(std::string_view app_id) const;
  const std::map<std::string, SetTransaction>& transactions() const { return transactions_; }
  // Live domain metadata by domain (removed domains are not kept).
  const std::map<std::string, DomainMetadata>& domains() const { return domains_; }
  // The checkpoint version replay started from, or -1 when it started at version 0.
  int64_t checkpoint_version() const { return checkpoint_version_; }

  int64_t total_size_bytes() const;
  // The rows of the live files, from their statistics (numRecords, less the rows their deletion
  // vectors remove); nullopt when a file has no numRecords (its rows are known only by reading it).
  std::optional<int64_t> num_records() const;
  // A table property of metadata().configuration, or `fallback`.
  std::string Property(std::string_view key, std::string_view fallback) const;

 private:
  friend class SnapshotLoader;
  Snapshot() = default;

  std::shared_ptr<FileSystem> fs_;
  std::string table_path_;
  int64_t version_ = -1;
  int64_t checkpoint_version_ = -1;
  Protocol protocol_;
  Metadata metadata_;
  TypePtr schema_;
  std::vector<AddFile> files_;
  std::vector<RemoveFile> tombstones_;
  std::map<std::string, SetTransaction> transactions_;
  std::map<std::string, DomainMetadata> domains_;
};

// The key of a logical file: its path and its deletion vector's unique id (empty without one).
std::string LogicalFileKey(std::string_view path, const std::optional<DeletionVectorDescriptor>& dv);

// Commit timestamps of a listing made strictly increasing (each at least the previous + 1 ms),
// as Spark adjusts them for time travel.
std::vector<int64_t> MonotonicCommitTimes(const std::vector<int64_t>& modification_times_ms);

}  // namespace sluice::delta
