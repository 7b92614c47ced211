#include "sluice/delta/source.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "delta/column_mapping.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/log.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::delta {

namespace {

// The paths of the data files a commit removes (its data-change `remove` actions), in log order.
std::vector<std::string> RemovedDataFiles(const std::vector<Action>& actions) {
  std::vector<std::string> removed;
  for (const Action& action : actions) {
    if (const auto* remove = std::get_if<RemoveFile>(&action); remove != nullptr && remove->data_change) {
      removed.push_back(remove->path);
    }
  }
  return removed;
}

// Whether the commit of `version`, removing `removed`, removes every file of the table before it.
Result<bool> RemovesEveryEarlierFile(const std::shared_ptr<FileSystem>& fs, const std::string& table_path,
                                     int64_t version, const std::vector<std::string>& removed) {
  if (version == 0) return true;
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr before, Snapshot::Load(fs, table_path, {.version = version - 1}));
  std::unordered_set<std::string_view> gone(removed.begin(), removed.end());
  for (const AddFile& file : before->files()) {
    if (!gone.count(file.path)) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<DeltaSource>> DeltaSource::Open(std::shared_ptr<FileSystem> fs, std::string table_path,
                                                       SourceOptions options) {
  options.max_files_per_trigger = std::max<int64_t>(1, options.max_files_per_trigger);
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr latest, Snapshot::Load(fs, table_path));
  auto source = std::unique_ptr<DeltaSource>(new DeltaSource(std::move(fs), std::move(table_path), options));
  switch (options.start) {
    case SourceOptions::Start::kSnapshot:
      source->initial_ = SourceOffset{latest->version(), 0, true};
      return source;
    case SourceOptions::Start::kLatest:
      source->initial_ = SourceOffset{latest->version() + 1, 0};
      return source;
    case SourceOptions::Start::kVersion:
      break;
  }
  int64_t start = options.starting_version;
  if (start < 0 || start > latest->version()) {
    return Status::Error(errors::kDeltaVersionNotFound,
                         fmt::format("startingVersion {} of '{}' does not exist; the latest version is {}", start,
                                     source->table_path_, latest->version()));
  }
  SLUICE_ASSIGN_OR_RETURN(bool exists, source->fs_->Exists(CommitPath(source->table_path_, start)));
  if (!exists) {
    return Status::Error(errors::kDeltaVersionNotFound,
                         fmt::format("the commit of startingVersion {} of '{}' was cleaned up", start, source->table_path_));
  }
  source->initial_ = SourceOffset{start, 0};
  return source;
}

Result<const std::vector<AddFile>*> DeltaSource::SnapshotFiles(int64_t version) {
  if (snapshot_version_ != version) {
    SLUICE_ASSIGN_OR_RETURN(SnapshotPtr snapshot, Snapshot::Load(fs_, table_path_, {.version = version}));
    snapshot_files_ = snapshot->files();
    // Spark's order: oldest first, so that a snapshot read in several ranges goes roughly as the
    // table was written.
    std::stable_sort(snapshot_files_.begin(), snapshot_files_.end(), [](const AddFile& a, const AddFile& b) {
      return a.modification_time < b.modification_time;
    });
    snapshot_version_ = version;
  }
  return &snapshot_files_;
}

Result<std::optional<std::vector<AddFile>>> DeltaSource::VersionFiles(int64_t version) {
  Result<std::vector<Action>> actions = ReadCommit(*fs_, table_path_, version);
  if (!actions.ok()) {
    if (actions.status().error_class() == errors::kFileNotFound) return std::optional<std::vector<AddFile>>();
    return actions.status();
  }
  const std::vector<std::string> removed = RemovedDataFiles(*actions);
  std::vector<AddFile> files;
  for (Action& action : *actions) {
    if (auto* add = std::get_if<AddFile>(&action); add != nullptr && add->data_change) {
      files.push_back(std::move(*add));
    }
  }
  if (!removed.empty()) {
    if (options_.skip_change_commits || (options_.ignore_deletes && files.empty())) {
      return std::optional<std::vector<AddFile>>(std::vector<AddFile>());
    }
    if (started_at_ == version) {
      SLUICE_ASSIGN_OR_RETURN(bool whole, RemovesEveryEarlierFile(fs_, table_path_, version, removed));
      if (whole) return std::optional<std::vector<AddFile>>(std::move(files));
    }
    return Status::Error(errors::kDeltaSourceDataDeleted,
                         fmt::format("version {} of '{}' removed data ('{}'); the stream reads appends only "
                                     "(skipChangeCommits passes such commits over{})",
                                     version, table_path_, removed.front(),
                                     files.empty() ? ", ignoreDeletes those that only remove" : ""));
  }
  SLUICE_RETURN_IF_ERROR(CheckSchemaChange(version, *actions));
  return std::optional<std::vector<AddFile>>(std::move(files));
}

Status DeltaSource::CheckSchemaChange(int64_t version, const std::vector<Action>& actions) {
  const Metadata* changed = nullptr;
  for (const Action& action : actions) {
    if (const auto* metadata = std::get_if<Metadata>(&action)) changed = metadata;
  }
  // The schema of the version a stream starts reading at is its schema.
  if (changed == nullptr || version == 0 || version == started_at_.value_or(initial_.version)) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(TypePtr after, ParseTypeJson(changed->schema_string));
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr before, Snapshot::Load(fs_, table_path_, {.version = version - 1}));
  if (std::optional<std::string> column = RenamedOrDroppedColumn(*before->schema(), *after)) {
    return Status::Error(errors::kDeltaStreamingIncompatibleSchemaChange,
                         fmt::format("version {} of '{}' renamed or dropped the column `{}`; a stream reads one "
                                     "schema: start it again on a new checkpoint with startingVersion {} (or later)",
                                     version, table_path_, *column, version));
  }
  return Status::OK();
}


Result<std::optional<int64_t>> LastWholeRewrite(const std::shared_ptr<FileSystem>& fs, const std::string& table_path) {
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr latest, Snapshot::Load(fs, table_path));
  for (int64_t version = latest->version(); version >= 0; --version) {
    Result<std::vector<Action>> actions = ReadCommit(*fs, table_path, version);
    if (!actions.ok()) {
      if (actions.status().error_class() == errors::kFileNotFound) return std::optional<int64_t>();  // cleaned up
      return actions.status();
    }
    const std::vector<std::string> removed = RemovedDataFiles(*actions);
    if (removed.empty()) continue;
    SLUICE_ASSIGN_OR_RETURN(bool whole, RemovesEveryEarlierFile(fs, table_path, version, removed));
    return whole ? std::optional<int64_t>(version) : std::optional<int64_t>();
  }
  return std::optional<int64_t>();
}

Status DeltaSource::CheckNotAHole(int64_t missing_version) {
  // Called at every poll that finds nothing new, so it costs one listing of the log from the
  // missing version on (one request on an object store, whatever the log's length): any later
  // commit or checkpoint shows a hole.
  SLUICE_ASSIGN_OR_RETURN(LogListing later, ListLog(*fs_, table_path_, missing_version));
  int64_t seen = -1;
  if (!later.commit_versions.empty()) seen = later.commit_versions.back();
  if (!later.checkpoints.empty()) seen = std::max(seen, later.checkpoints.rbegin()->first);
  if (seen > missing_version) {
    return Status::Error(errors::kDeltaLogCorrupt, fmt::format("the log of '{}' is missing commit {} while version {} exists",
                                                               table_path_, missing_version, seen));
  }
  return Status::OK();
}

Result<SourceOffset> DeltaSource::LatestOffset(const SourceOffset& start) {
  SourceOffset end = start;
  int64_t budget = options_.max_files_per_trigger;
  if (end.snapshot) {
    SLUICE_ASSIGN_OR_RETURN(const std::vector<AddFile>* files, SnapshotFiles(end.version));
    const int64_t remaining = static_cast<int64_t>(files->size()) - end.index;
    if (remaining > budget) {
      end.index += budget;
      return end;
    }
    budget -= std::max<int64_t>(remaining, 0);
    end = SourceOffset{end.version + 1, 0};
  }
  while (budget > 0) {
    Result<std::optional<std::vector<AddFile>>> read = VersionFiles(end.version);
    // The range stops before a commit the stream cannot read, so that the versions before it are
    // read; the next range starts at it and fails.
    if (!read.ok() && end != start &&
        (read.status().error_class() == errors::kDeltaSourceDataDeleted ||
         read.status().error_class() == errors::kDeltaStreamingIncompatibleSchemaChange)) {
      break;
    }
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::vector<AddFile>> files, std::move(read));
    if (!files) {
      SLUICE_RETURN_IF_ERROR(CheckNotAHole(end.version));
      break;
    }
    int64_t remaining = static_cast<int64_t>(files->size()) - end.index;
    if (remaining > budget) {
      end.index += budget;
      break;
    }
    budget -= std::max<int64_t>(remaining, 0);
    end = SourceOffset{end.version + 1, 0};
  }
  return end;
}

Result<std::vector<AddFile>> DeltaSource::Files(const SourceOffset& start, const SourceOffset& end) {
  std::vector<AddFile> result;
  SourceOffset from = start;
  if (from.snapshot) {
    SLUICE_ASSIGN_OR_RETURN(const std::vector<AddFile>* files, SnapshotFiles(from.version));
    const size_t last = end.snapshot && end.version == from.version ? static_cast<size_t>(end.index) : files->size();
    for (size_t i = static_cast<size_t>(from.index); i < std::min(last, files->size()); ++i) {
      result.push_back((*files)[i]);
    }
    if (end.snapshot) return result;
    from = SourceOffset{from.version + 1, 0};
  }
  for (int64_t version = from.version; version <= end.version; ++version) {
    if (version == end.version && end.index == 0) break;
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::vector<AddFile>> files, VersionFiles(version));
    if (!files) {
      return Status::Error(errors::kDeltaVersionNotFound,
                           fmt::format("version {} of '{}' is missing from the log", version, table_path_));
    }
    size_t first = version == from.version ? static_cast<size_t>(from.index) : 0;
    size_t last = version == end.version ? static_cast<size_t>(end.index) : files->size();
    for (size_t i = first; i < std::min(last, files->size()); ++i) result.push_back(std::move((*files)[i]));
  }
  return result;
}

Result<std::vector<BatchPtr>> DeltaSource::Read(const SourceOffset& start, const SourceOffset& end) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<AddFile> files, Files(start, end));
  int64_t schema_version = end.snapshot || end.index > 0 ? end.version : end.version - 1;
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr snapshot, Snapshot::Load(fs_, table_path_, {.version = schema_version}));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableScan> scan, TableScan::Open(snapshot, {.files = std::move(files)}));
  std::vector<BatchPtr> batches;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) return batches;
    batches.push_back(std::move(batch));
  }
}

}  // namespace sluice::delta
