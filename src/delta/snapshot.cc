// Snapshot loading: choose the log segment (a checkpoint and the commits after it), replay it,
// then check that the result is a table sluice can read.
//
// For the latest version the log is listed from the checkpoint `_last_checkpoint` names, not from
// its start (a log committed every second holds millions of files): one listing request on an
// object store, then the checkpoint and the commits after it. The whole log is listed when the
// pointer is missing, unreadable or names a checkpoint that is gone, and for time travel. Either
// listing finds a missing commit of any length (DELTA_LOG_CORRUPT).
#include "sluice/delta/snapshot.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "delta/column_mapping.h"
#include "delta/data_files.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/delta/features.h"
#include "sluice/delta/log.h"

namespace sluice::delta {

std::string LogicalFileKey(std::string_view path, const std::optional<DeletionVectorDescriptor>& dv) {
  std::string key(path);
  if (dv) {
    key.push_back('\n');
    key += dv->UniqueId();
  }
  return key;
}

std::vector<int64_t> MonotonicCommitTimes(const std::vector<int64_t>& modification_times_ms) {
  std::vector<int64_t> times = modification_times_ms;
  for (size_t i = 1; i < times.size(); ++i) times[i] = std::max(times[i], times[i - 1] + 1);
  return times;
}

namespace {

// The state being reconstructed, in hash maps while replaying.
struct Replay {
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::unordered_map<std::string, AddFile> files;
  std::unordered_map<std::string, RemoveFile> tombstones;
  std::map<std::string, SetTransaction> transactions;
  std::map<std::string, DomainMetadata> domains;

  void Apply(Action&& action) {
    if (auto* add = std::get_if<AddFile>(&action)) {
      std::string key = LogicalFileKey(add->path, add->deletion_vector);
      tombstones.erase(key);
      files.insert_or_assign(std::move(key), std::move(*add));
    } else if (auto* remove = std::get_if<RemoveFile>(&action)) {
      std::string key = LogicalFileKey(remove->path, remove->deletion_vector);
      files.erase(key);
      tombstones.insert_or_assign(std::move(key), std::move(*remove));
    } else if (auto* txn = std::get_if<SetTransaction>(&action)) {
      transactions.insert_or_assign(txn->app_id, std::move(*txn));
    } else if (auto* protocol_action = std::get_if<Protocol>(&action)) {
      protocol = std::move(*protocol_action);
    } else if (auto* metadata_action = std::get_if<Metadata>(&action)) {
      metadata = std::move(*metadata_action);
    } else if (auto* domain = std::get_if<DomainMetadata>(&action)) {
      if (domain->removed) {
        domains.erase(domain->domain);
      } else {
        domains.insert_or_assign(domain->domain, std::move(*domain));
      }
    }
    // commitInfo and cdc do not take part in the snapshot's state.
  }
};

struct Segment {
  std::optional<CheckpointFiles> checkpoint;
  int64_t first_commit = 0;  // commits [first_commit, version] are replayed
  int64_t version = -1;
};

Status VersionNotFound(std::string message) {
  return Status::Error(errors::kDeltaVersionNotFound, std::move(message));
}

}  // namespace

class SnapshotLoader {
 public:
  SnapshotLoader(std::shared_ptr<FileSystem> fs, std::string table_path)
      : fs_(std::move(fs)), table_path_(std::move(table_path)) {}

  Result<SnapshotPtr> Load(const SnapshotOptions& options) {
    if (!options.version && !options.timestamp_ms) {
      SLUICE_ASSIGN_OR_RETURN(bool loaded, TryLatestFromLastCheckpoint());
      if (loaded) return Finish();
    }
    SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLog(*fs_, table_path_));
    SLUICE_ASSIGN_OR_RETURN(Segment segment, SegmentFromListing(listing, options));
    SLUICE_RETURN_IF_ERROR(ReplaySegment(segment));
    return Finish();
  }

 private:
  // Replays the latest version from a listing of the log that starts at the checkpoint named by
  // `_last_checkpoint` (or a later one the listing shows). Returns false (nothing replayed) when
  // the pointer is missing or unreadable, or its checkpoint is gone: the whole log is listed then.
  Result<bool> TryLatestFromLastCheckpoint() {
    Result<std::string> text = fs_->ReadFile(LastCheckpointPath(table_path_));
    if (!text.ok()) {
      if (text.status().error_class() == errors::kFileNotFound) return false;
      return text.status();
    }
    Result<LastCheckpoint> pointer = ParseLastCheckpoint(*text);
    if (!pointer.ok()) return false;  // a torn or foreign pointer is only a hint: list instead
    SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLog(*fs_, table_path_, pointer->version));
    if (listing.checkpoints.empty()) return false;
    SLUICE_ASSIGN_OR_RETURN(Segment segment, SegmentFromListing(listing, {}));
    Status replayed = ReplaySegment(segment);
    if (replayed.error_class() == errors::kFileNotFound && segment.checkpoint) {
      replay_ = Replay{};  // the checkpoint went (a cleanup between listing and reading): list all
      return false;
    }
    SLUICE_RETURN_IF_ERROR(replayed);
    return true;
  }

  Result<Segment> SegmentFromListing(const LogListing& listing, const SnapshotOptions& options) {
    if (listing.commit_versions.empty() && listing.checkpoints.empty()) {
      return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta table at '{}' (no _delta_log commits)", table_path_));
    }
    int64_t latest = listing.commit_versions.empty() ? -1 : listing.commit_versions.back();
    if (!listing.checkpoints.empty()) latest = std::max(latest, listing.checkpoints.rbegin()->first);

    int64_t target = latest;
    if (options.version) {
      target = *options.version;
      if (target < 0 || target > latest) {
        return VersionNotFound(fmt::format("version {} of '{}' does not exist; the latest is {}", target, table_path_, latest));
      }
    } else if (options.timestamp_ms) {
      std::vector<int64_t> times = MonotonicCommitTimes(listing.commit_times_ms);
      auto after = std::upper_bound(times.begin(), times.end(), *options.timestamp_ms);
      if (after == times.begin()) {
        return VersionNotFound(fmt::format("'{}' has no commit at or before timestamp {} ms", table_path_, *options.timestamp_ms));
      }
      target = listing.commit_versions[static_cast<size_t>(after - times.begin() - 1)];
    }

    Segment segment;
    segment.version = target;
    auto checkpoint = listing.checkpoints.upper_bound(target);
    if (checkpoint != listing.checkpoints.begin()) {
      segment.checkpoint = std::prev(checkpoint)->second;
      segment.first_commit = segment.checkpoint->version + 1;
    }
    // Every commit of the segment must be present: versions are contiguous.
    auto first = std::lower_bound(listing.commit_versions.begin(), listing.commit_versions.end(), segment.first_commit);
    int64_t expected = segment.first_commit;
    for (auto it = first; it != listing.commit_versions.end() && *it <= target; ++it, ++expected) {
      if (*it != expected) break;
    }
    if (expected != target + 1) {
      if (!segment.checkpoint && expected == 0) {
        return VersionNotFound(fmt::format("version {} of '{}' can no longer be reconstructed: its early log was cleaned up", target, table_path_));
      }
      return Status::Error(errors::kDeltaLogCorrupt, fmt::format("the log of '{}' is missing commit {}", table_path_, expected));
    }
    return segment;
  }

  Status ReplaySegment(const Segment& segment) {
    if (segment.checkpoint) {
      SLUICE_RETURN_IF_ERROR(ReadCheckpoint(*fs_, *segment.checkpoint, apply_));
      checkpoint_version_ = segment.checkpoint->version;
    }
    for (int64_t version = segment.first_commit; version <= segment.version; ++version) {
      SLUICE_ASSIGN_OR_RETURN(std::vector<Action> actions, ReadCommit(*fs_, table_path_, version));
      for (Action& action : actions) replay_.Apply(std::move(action));
    }
    version_ = segment.version;
    return Status::OK();
  }

  Result<SnapshotPtr> Finish() {
    if (!replay_.protocol || !replay_.metadata) {
      return Status::Error(errors::kDeltaLogCorrupt,
                           fmt::format("the log of '{}' at version {} has no {} action", table_path_, version_,
                                       replay_.protocol ? "metaData" : "protocol"));
    }
    SLUICE_RETURN_IF_ERROR(CheckReadSupport(*replay_.protocol, *replay_.metadata));
    Result<TypePtr> schema = ParseTypeJson(replay_.metadata->schema_string);
    if (!schema.ok()) return schema.status().WithContext(fmt::format("schema of '{}'", table_path_));
    if ((*schema)->id() != TypeId::kStruct) {
      return Status::Error(errors::kDeltaLogCorrupt, fmt::format("the schema of '{}' is not a struct", table_path_));
    }
    for (const std::string& column : replay_.metadata->partition_columns) {
      if ((*schema)->FieldIndex(column) < 0) {
        return Status::Error(errors::kDeltaLogCorrupt,
                             fmt::format("partition column '{}' of '{}' is not in the schema", column, table_path_));
      }
    }

    auto snapshot = std::shared_ptr<Snapshot>(new Snapshot());
    snapshot->fs_ = fs_;
    snapshot->table_path_ = table_path_;
    snapshot->version_ = version_;
    snapshot->checkpoint_version_ = checkpoint_version_;
    snapshot->protocol_ = std::move(*replay_.protocol);
    snapshot->metadata_ = std::move(*replay_.metadata);
    // Without column mapping, field metadata a mapping once left behind means nothing.
    Result<ColumnMappingMode> mode = MappingModeOf(snapshot->metadata_);
    snapshot->schema_ = mode.ok() && *mode == ColumnMappingMode::kNone ? WithoutColumnMapping(*schema) : *schema;
    snapshot->files_.reserve(replay_.files.size());
    for (auto& [key, add] : replay_.files) snapshot->files_.push_back(std::move(add));
    std::sort(snapshot->files_.begin(), snapshot->files_.end(),
              [](const AddFile& a, const AddFile& b) { return a.path < b.path; });
    for (auto& [key, remove] : replay_.tombstones) snapshot->tombstones_.push_back(std::move(remove));
    std::sort(snapshot->tombstones_.begin(), snapshot->tombstones_.end(),
              [](const RemoveFile& a, const RemoveFile& b) { return a.path < b.path; });
    snapshot->transactions_ = std::move(replay_.transactions);
    snapshot->domains_ = std::move(replay_.domains);
    return SnapshotPtr(std::move(snapshot));
  }

  std::shared_ptr<FileSystem> fs_;
  std::string table_path_;
  Replay replay_;
  // Checkpoint rows are applied as they are decoded, without collecting them first.
  ActionSink apply_ = [this](Action&& action) { replay_.Apply(std::move(action)); };
  int64_t version_ = -1;
  int64_t checkpoint_version_ = -1;
};

Result<SnapshotPtr> Snapshot::Load(std::shared_ptr<FileSystem> fs, std::string table_path,
                                   const SnapshotOptions& options) {
  while (table_path.size() > 1 && table_path.back() == '/') table_path.pop_back();
  SnapshotLoader loader(std::move(fs), std::move(table_path));
  return loader.Load(options);
}

std::optional<int64_t> Snapshot::TransactionVersion(std::string_view app_id) const {
  auto it = transactions_.find(std::string(app_id));
  if (it == transactions_.end()) return std::nullopt;
  return it->second.version;
}

int64_t Snapshot::total_size_bytes() const {
  int64_t total = 0;
  for (const AddFile& file : files_) total += file.size;
  return total;
}

std::optional<int64_t> Snapshot::num_records() const {
  int64_t total = 0;
  for (const AddFile& file : files_) {
    std::optional<int64_t> records = StatsNumRecords(file.stats);
    if (!records) return std::nullopt;
    total += *records - (file.deletion_vector ? file.deletion_vector->cardinality : 0);
  }
  return total;
}

std::string Snapshot::Property(std::string_view key, std::string_view fallback) const {
  auto it = metadata_.configuration.find(std::string(key));
  return it == metadata_.configuration.end() ? std::string(fallback) : it->second;
}

}  // namespace sluice::delta
