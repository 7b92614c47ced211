#include "sluice/delta/source.h"

#include <algorithm>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/delta/log.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::delta {

Result<std::unique_ptr<DeltaSource>> DeltaSource::Open(std::shared_ptr<FileSystem> fs, std::string table_path,
                                                       SourceOptions options) {
  options.max_files_per_trigger = std::max<int64_t>(1, options.max_files_per_trigger);
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr latest, Snapshot::Load(fs, table_path));
  auto source = std::unique_ptr<DeltaSource>(new DeltaSource(std::move(fs), std::move(table_path), options));
  if (!options.starting_version) {
    source->initial_ = SourceOffset{latest->version() + 1, 0};
    return source;
  }
  int64_t start = *options.starting_version;
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

Result<std::optional<std::vector<AddFile>>> DeltaSource::VersionFiles(int64_t version) {
  Result<std::vector<Action>> actions = ReadCommit(*fs_, table_path_, version);
  if (!actions.ok()) {
    if (actions.status().error_class() == errors::kFileNotFound) return std::optional<std::vector<AddFile>>();
    return actions.status();
  }
  std::vector<AddFile> files;
  for (Action& action : *actions) {
    if (auto* remove = std::get_if<RemoveFile>(&action); remove != nullptr && remove->data_change) {
      return Status::Error(errors::kDeltaSourceDataDeleted,
                           fmt::format("version {} of '{}' removed data ('{}'); the stream reads appends only", version,
                                       table_path_, remove->path));
    }
    if (auto* add = std::get_if<AddFile>(&action); add != nullptr && add->data_change) {
      files.push_back(std::move(*add));
    }
  }
  return std::optional<std::vector<AddFile>>(std::move(files));
}

Status DeltaSource::CheckNotAHole(int64_t missing_version) {
  // Called at every poll that finds nothing new, so it costs a stat and a small read, never a
  // listing of the log: a later commit right after the missing one, or a checkpoint past it, shows
  // a hole. A hole of several commits is thus found at the latest when the next checkpoint is written.
  auto hole = [&](int64_t later) {
    return Status::Error(errors::kDeltaLogCorrupt, fmt::format("the log of '{}' is missing commit {} while version {} exists",
                                                               table_path_, missing_version, later));
  };
  SLUICE_ASSIGN_OR_RETURN(bool next_exists, fs_->Exists(CommitPath(table_path_, missing_version + 1)));
  if (next_exists) return hole(missing_version + 1);
  Result<std::string> pointer = fs_->ReadFile(LastCheckpointPath(table_path_));
  if (!pointer.ok()) return pointer.status().error_class() == errors::kFileNotFound ? Status::OK() : pointer.status();
  Result<LastCheckpoint> checkpoint = ParseLastCheckpoint(*pointer);
  if (checkpoint.ok() && checkpoint->version > missing_version) return hole(checkpoint->version);
  return Status::OK();
}

Result<SourceOffset> DeltaSource::LatestOffset(const SourceOffset& start) {
  SourceOffset end = start;
  int64_t budget = options_.max_files_per_trigger;
  while (budget > 0) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::vector<AddFile>> files, VersionFiles(end.version));
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
  for (int64_t version = start.version; version <= end.version; ++version) {
    if (version == end.version && end.index == 0) break;
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::vector<AddFile>> files, VersionFiles(version));
    if (!files) {
      return Status::Error(errors::kDeltaVersionNotFound,
                           fmt::format("version {} of '{}' is missing from the log", version, table_path_));
    }
    size_t first = version == start.version ? static_cast<size_t>(start.index) : 0;
    size_t last = version == end.version ? static_cast<size_t>(end.index) : files->size();
    for (size_t i = first; i < std::min(last, files->size()); ++i) result.push_back(std::move((*files)[i]));
  }
  return result;
}

Result<std::vector<BatchPtr>> DeltaSource::Read(const SourceOffset& start, const SourceOffset& end) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<AddFile> files, Files(start, end));
  int64_t schema_version = end.index == 0 ? end.version - 1 : end.version;
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
