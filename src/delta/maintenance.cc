#include "sluice/delta/maintenance.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "delta/data_files.h"
#include "delta/file_pruning.h"
#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/iso_datetime.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/delta/deletion_vector.h"
#include "sluice/delta/features.h"
#include "sluice/delta/log.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/transaction.h"

namespace sluice::delta {
namespace {


Status TableNotFound(const std::string& table_path) {
  return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta table at '{}'", table_path));
}

bool HasDeletedRows(const AddFile& file) { return file.deletion_vector && file.deletion_vector->cardinality > 0; }

// The partition of a file as one text: its partition values (every partition column has one, by
// its physical name) in the map's order.
std::string PartitionKey(const AddFile& file) {
  std::string key;
  for (const auto& [column, value] : file.partition_values) {
    key += value ? *value : std::string("\x01");
    key += '\0';
  }
  return key;
}

Result<int64_t> TargetFileSize(const Snapshot& snapshot, int64_t given) {
  if (given > 0) return given;
  std::string property = snapshot.Property("delta.targetFileSize", "");
  if (property.empty()) return kDefaultTargetFileSize;
  char* end = nullptr;
  long long bytes = std::strtoll(property.c_str(), &end, 10);
  if (end == property.c_str() || *end != '\0' || bytes <= 0) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("delta.targetFileSize is '{}', not a positive number of bytes", property));
  }
  return static_cast<int64_t>(bytes);
}

// Files of one partition taken smallest first into bins of at most `target` bytes; a bin is kept
// when compacting it changes something (two files or more, or deleted rows to drop).
std::vector<std::vector<AddFile>> Bins(std::vector<AddFile> files, int64_t target) {
  std::sort(files.begin(), files.end(), [](const AddFile& a, const AddFile& b) {
    return a.size != b.size ? a.size < b.size : a.path < b.path;
  });
  std::vector<std::vector<AddFile>> bins;
  std::vector<AddFile> bin;
  int64_t bytes = 0;
  auto close = [&] {
    if (bin.size() > 1 || (bin.size() == 1 && HasDeletedRows(bin[0]))) bins.push_back(std::move(bin));
    bin.clear();
    bytes = 0;
  };
  for (AddFile& file : files) {
    if (!bin.empty() && bytes + file.size > target) close();
    bytes += file.size;
    bin.push_back(std::move(file));
  }
  close();
  return bins;
}

// The rows of `rows` in Z-order over the columns `keys`: each row's rank by each column (scaled
// to 32 bits) gives bits that are interleaved, most significant first, into one 64-bit key.
Result<BatchPtr> ZOrdered(const BatchPtr& rows, const std::vector<int>& keys) {
  const int64_t n = rows->num_rows();
  if (n < 2) return rows;
  const int bits = static_cast<int>(64 / keys.size());
  std::vector<uint64_t> z(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < keys.size(); ++k) {
    const int column[] = {keys[k]};
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> order, SortIndices(rows, column));
    for (int64_t rank = 0; rank < n; ++rank) {
      // The rank scaled into [0, 2^32), keeping its top `bits` bits.
      // (rank < n < 2^63, so rank * 2^32 needs 128 bits: the quotient is below 2^32.)
      const uint64_t scaled = static_cast<uint64_t>((static_cast<int128_t>(rank) << 32) / n);
      const uint64_t top = bits >= 32 ? scaled : scaled >> (32 - bits);
      uint64_t& key = z[static_cast<size_t>(order[static_cast<size_t>(rank)])];
      for (int bit = 0; bit < bits && bit < 32; ++bit) {
        if ((top >> (std::min(bits, 32) - 1 - bit)) & 1) {
          key |= uint64_t{1} << (63 - (bit * keys.size() + k));
        }
      }
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return z[static_cast<size_t>(a)] < z[static_cast<size_t>(b)]; });
  return Take(rows, order);
}

Status CheckZOrderColumns(const Snapshot& snapshot, const std::vector<std::string>& columns, std::vector<int>* keys) {
  const TypePtr& schema = snapshot.schema();
  for (const std::string& column : columns) {
    const std::vector<std::string>& partition_columns = snapshot.metadata().partition_columns;
    if (std::any_of(partition_columns.begin(), partition_columns.end(),
                    [&](const std::string& p) { return EqualsIgnoreCase(p, column); })) {
      return Status::Error(errors::kDeltaZorderingOnPartitionColumn,
                           fmt::format("`{}` is a partition column: ZORDER BY orders rows within partitions, by "
                                       "other columns",
                                       column));
    }
    int index = schema->FieldIndexIgnoreCase(column);
    if (index < 0) {
      return Status::Error(errors::kUnresolvedColumn, fmt::format("ZORDER BY column `{}` is not in the table", column));
    }
    if (schema->field(index).type->is_nested()) {
      return Status::Error(errors::kDatatypeMismatch, fmt::format("ZORDER BY column `{}` is a {}, which has no order",
                                                                  column, schema->field(index).type->ToString()));
    }
    keys->push_back(index);
  }
  if (columns.size() > 32) return Status::Error(errors::kInvalidArgument, "ZORDER BY takes at most 32 columns");
  return Status::OK();
}

std::string Percentile(std::vector<int64_t> sizes, double p) {
  if (sizes.empty()) return "0";
  std::sort(sizes.begin(), sizes.end());
  return std::to_string(sizes[static_cast<size_t>(p * static_cast<double>(sizes.size() - 1))]);
}

// The latest version committed at or before the ISO-8601 `timestamp`.
Result<int64_t> VersionAt(FileSystem& fs, const std::string& table_path, const std::string& timestamp) {
  int64_t micros = 0;
  if (!ParseIsoTimestamp(timestamp, &micros)) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("'{}' is not a timestamp (yyyy-MM-dd[ HH:mm:ss[.f]][zone])", timestamp));
  }
  const int64_t ms = micros / 1000 - (micros % 1000 < 0 ? 1 : 0);
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLog(fs, table_path));
  if (listing.commit_versions.empty()) return TableNotFound(table_path);
  const std::vector<int64_t> times = MonotonicCommitTimes(listing.commit_times_ms);
  auto at = [&](size_t i) { return TimestampText(times[i] * 1000); };
  if (ms > times.back()) {
    return Status::Error(errors::kDeltaCannotRestoreTimestampGreater,
                         fmt::format("cannot restore '{}' to {}: it is after the latest commit (version {}, {})",
                                     table_path, timestamp, listing.commit_versions.back(), at(times.size() - 1)));
  }
  auto after = std::upper_bound(times.begin(), times.end(), ms);
  if (after == times.begin()) {
    return Status::Error(errors::kDeltaCannotRestoreTimestampEarlier,
                         fmt::format("cannot restore '{}' to {}: it is before the earliest commit kept (version {}, {})",
                                     table_path, timestamp, listing.commit_versions.front(), at(0)));
  }
  return listing.commit_versions[static_cast<size_t>(after - times.begin() - 1)];
}

}  // namespace

Result<OptimizeResult> Optimize(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                const OptimizeSpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Start(fs, table_path));
  const SnapshotPtr snapshot = txn->read_snapshot();
  if (snapshot == nullptr) return TableNotFound(table_path);
  const std::vector<std::string>& partition_columns = snapshot->metadata().partition_columns;
  std::optional<FilePruner> pruner;
  if (spec.where) {
    for (const std::string& column : spec.where->ReferencedColumns()) {
      bool partition = std::any_of(partition_columns.begin(), partition_columns.end(),
                                   [&](const std::string& p) { return EqualsIgnoreCase(p, column); });
      if (!partition) {
        return Status::Error(errors::kDeltaNonPartitionColumnReference,
                             fmt::format("OPTIMIZE's predicate names `{}`, which is not a partition column; only "
                                         "the partition columns may be named: [{}]",
                                         column, fmt::join(partition_columns, ", ")));
      }
    }
    SLUICE_ASSIGN_OR_RETURN(FilePruner made, FilePruner::Make(*spec.where, snapshot->schema(), partition_columns));
    pruner.emplace(std::move(made));
  }
  SLUICE_ASSIGN_OR_RETURN(const int64_t target, TargetFileSize(*snapshot, spec.target_file_size));
  std::vector<int> zorder_keys;
  SLUICE_RETURN_IF_ERROR(CheckZOrderColumns(*snapshot, spec.zorder_by, &zorder_keys));
  const bool zorder = !zorder_keys.empty();

  std::map<std::string, std::vector<AddFile>> partitions;
  for (const AddFile& file : snapshot->files()) {
    if (pruner && !pruner->MayMatch(file)) continue;
    if (!zorder && file.size >= target && !HasDeletedRows(file)) continue;
    partitions[PartitionKey(file)].push_back(file);
  }
  OptimizeResult result;
  result.version = snapshot->version();
  std::vector<std::vector<AddFile>> bins;
  for (auto& [key, files] : partitions) {
    // Z-ordering takes a partition whole: its rows are ordered together.
    std::vector<std::vector<AddFile>> of_partition;
    if (zorder) {
      of_partition.push_back(std::move(files));
    } else {
      of_partition = Bins(std::move(files), target);
    }
    if (!of_partition.empty()) ++result.num_partitions_optimized;
    for (auto& bin : of_partition) bins.push_back(std::move(bin));
  }
  if (bins.empty()) {
    result.skipped = true;
    return result;
  }

  const int64_t now = NowMs();
  const bool row_tracking = TracksRowIds(snapshot->protocol());
  std::vector<AddFile> compacted;
  std::vector<int64_t> added_sizes;
  for (const std::vector<AddFile>& bin : bins) {
    // Rows keep their ids and commit versions (the scan gives them, the files store them).
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableScan> scan,
                            TableScan::Open(snapshot, ScanOptions{.files = bin, .row_tracking = row_tracking}));
    std::vector<BatchPtr> batches;
    int64_t bin_bytes = 0;
    for (const AddFile& file : bin) bin_bytes += file.size;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      if (batch->num_rows() > 0) batches.push_back(std::move(batch));
    }
    // Z-ordered rows are cut into files of about the target size (as many rows a file as the
    // bin's bytes a row give); compacted rows go into one file.
    std::vector<BatchPtr> files;
    if (zorder && !batches.empty()) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr all, Concatenate(batches));
      SLUICE_ASSIGN_OR_RETURN(BatchPtr ordered, ZOrdered(all, zorder_keys));
      const int64_t rows_per_file = std::max<int64_t>(
          1, static_cast<int64_t>(static_cast<double>(target) * static_cast<double>(ordered->num_rows()) /
                                  static_cast<double>(std::max<int64_t>(bin_bytes, 1))));
      for (int64_t first = 0; first < ordered->num_rows(); first += rows_per_file) {
        files.push_back(Slice(ordered, first, std::min(rows_per_file, ordered->num_rows() - first)));
      }
    }
    std::vector<AddFile> adds;
    auto write = [&](const std::vector<BatchPtr>& rows) -> Status {
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<DataFileWriter> writer,
                              DataFileWriter::Open(*fs, table_path, snapshot->schema(), snapshot->metadata(), now,
                                                   row_tracking));
      for (const BatchPtr& batch : rows) SLUICE_RETURN_IF_ERROR(writer->Write(batch));
      SLUICE_ASSIGN_OR_RETURN(std::vector<AddFile> written, writer->Finish());
      for (AddFile& add : written) adds.push_back(std::move(add));
      return Status::OK();
    };
    if (zorder) {
      for (const BatchPtr& file : files) SLUICE_RETURN_IF_ERROR(write({file}));
    } else {
      SLUICE_RETURN_IF_ERROR(write(batches));
    }
    for (AddFile& add : adds) {
      add.data_change = false;
      result.num_bytes_added += add.size;
      added_sizes.push_back(add.size);
      ++result.num_files_added;
      txn->Add(std::move(add));
    }
    for (const AddFile& file : bin) {
      RemoveFile remove = RemovalOf(file, now);
      remove.data_change = false;
      txn->Remove(std::move(remove));
      result.num_bytes_removed += file.size;
      ++result.num_files_removed;
      if (HasDeletedRows(file)) ++result.num_deletion_vectors_removed;
      compacted.push_back(file);
    }
  }
  txn->ReadFiles(compacted);
  std::string zorder_by;
  for (const std::string& column : spec.zorder_by) zorder_by += (zorder_by.empty() ? "\"" : ",\"") + column + "\"";
  StringMap parameters = {{"predicate", spec.where ? "[\"" + spec.where->ToSql() + "\"]" : "[]"},
                          {"zOrderBy", "[" + zorder_by + "]"}};
  StringMap metrics = {
      {"numRemovedFiles", std::to_string(result.num_files_removed)},
      {"numRemovedBytes", std::to_string(result.num_bytes_removed)},
      {"numAddedFiles", std::to_string(result.num_files_added)},
      {"numAddedBytes", std::to_string(result.num_bytes_added)},
      {"numDeletionVectorsRemoved", std::to_string(result.num_deletion_vectors_removed)},
      {"minFileSize", Percentile(added_sizes, 0)},
      {"p25FileSize", Percentile(added_sizes, 0.25)},
      {"p50FileSize", Percentile(added_sizes, 0.5)},
      {"p75FileSize", Percentile(added_sizes, 0.75)},
      {"maxFileSize", Percentile(added_sizes, 1)},
  };
  SLUICE_ASSIGN_OR_RETURN(result.version, txn->Commit(kOperationOptimize, std::move(parameters), std::move(metrics)));
  result.skipped = false;
  return result;
}

Status AutoCompact(std::shared_ptr<FileSystem> fs, const std::string& table_path, int64_t version,
                   const std::vector<AddFile>& added) {
  if (added.empty()) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(SnapshotPtr snapshot, Snapshot::Load(fs, table_path, SnapshotOptions{.version = version}));
  const std::string setting = snapshot->Property("delta.autoOptimize.autoCompact", "false");
  if (!EqualsIgnoreCase(setting, "true") && !EqualsIgnoreCase(setting, "auto")) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(const int64_t target, TargetFileSize(*snapshot, 0));
  std::set<std::string> written;
  for (const AddFile& file : added) written.insert(PartitionKey(file));
  std::map<std::string, int> small;
  for (const AddFile& file : snapshot->files()) {
    std::string key = PartitionKey(file);
    if (file.size < target && written.count(key) > 0 && ++small[key] >= kAutoCompactMinFiles) {
      return Optimize(fs, table_path, {}).status();
    }
  }
  return Status::OK();
}

Result<VacuumResult> Vacuum(std::shared_ptr<FileSystem> fs, const std::string& table_path, const VacuumSpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> start, Transaction::Start(fs, table_path));
  const SnapshotPtr snapshot = start->read_snapshot();
  if (snapshot == nullptr) return TableNotFound(table_path);
  const std::string property = snapshot->Property("delta.deletedFileRetentionDuration", "interval 1 week");
  SLUICE_ASSIGN_OR_RETURN(const int64_t table_retention_ms, ParseIntervalMs(property));
  int64_t retention_ms = table_retention_ms;
  if (spec.retention_hours) {
    if (!(*spec.retention_hours >= 0)) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("VACUUM's retention is {} hours; it cannot be negative", *spec.retention_hours));
    }
    retention_ms = static_cast<int64_t>(*spec.retention_hours * 3'600'000.0);
  }
  if (retention_ms < table_retention_ms && !spec.force) {
    return Status::Error(errors::kDeltaVacuumRetentionPeriodTooShort,
                         fmt::format("a retention of {} hours is below the table's delta.deletedFileRetentionDuration "
                                     "({}): files a reader or writer still uses may go. Force it if no query reads "
                                     "versions older than that, or keep the retention",
                                     static_cast<double>(retention_ms) / 3'600'000.0, property));
  }
  const int64_t now = spec.now_ms.value_or(NowMs());
  const int64_t threshold = now - retention_ms;

  // What the latest version uses, and when the tombstoned files left the table.
  std::set<std::string> live;
  std::map<std::string, int64_t> removed_at;
  for (const AddFile& file : snapshot->files()) {
    SLUICE_ASSIGN_OR_RETURN(std::string path, DataFilePath(table_path, file.path));
    live.insert(path);
    if (file.deletion_vector && file.deletion_vector->storage_type != "i") {
      SLUICE_ASSIGN_OR_RETURN(std::string dv, DeletionVectorFilePath(table_path, *file.deletion_vector));
      live.insert(dv);
    }
  }
  for (const RemoveFile& file : snapshot->tombstones()) {
    SLUICE_ASSIGN_OR_RETURN(std::string path, DataFilePath(table_path, file.path));
    removed_at[path] = std::max(removed_at[path], file.deletion_timestamp.value_or(0));
    if (file.deletion_vector && file.deletion_vector->storage_type != "i") {
      SLUICE_ASSIGN_OR_RETURN(std::string dv, DeletionVectorFilePath(table_path, *file.deletion_vector));
      removed_at[dv] = std::max(removed_at[dv], file.deletion_timestamp.value_or(0));
    }
  }

  VacuumResult result;
  std::vector<std::string> directories = {table_path};
  while (!directories.empty()) {
    std::string directory = std::move(directories.back());
    directories.pop_back();
    SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> entries, fs->List(directory));
    for (const FileInfo& entry : entries) {
      std::string_view name = std::string_view(entry.path).substr(entry.path.rfind('/') + 1);
      // `_delta_log`, sluice's and other tools' own folders, hidden files; a partition folder
      // (`_p=1`) is the table's even when its column's name starts with `_`.
      if ((name.starts_with("_") || name.starts_with(".")) && name.find('=') == std::string_view::npos) continue;
      if (entry.is_directory) {
        directories.push_back(entry.path);
        continue;
      }
      if (live.count(entry.path) > 0) continue;
      auto removed = removed_at.find(entry.path);
      const int64_t gone_since = removed != removed_at.end() ? removed->second : entry.modification_time_ms;
      if (gone_since >= threshold) continue;
      result.files.push_back(entry.path);
      result.bytes += entry.size;
    }
  }
  std::sort(result.files.begin(), result.files.end());
  if (spec.dry_run) return result;

  StringMap parameters = {{"retentionCheckEnabled", spec.force ? "false" : "true"},
                          {"defaultRetentionMillis", std::to_string(table_retention_ms)},
                          {"specifiedRetentionMillis", std::to_string(retention_ms)}};
  SLUICE_RETURN_IF_ERROR(start
                             ->Commit(kOperationVacuumStart, parameters,
                                      StringMap{{"numFilesToDelete", std::to_string(result.files.size())},
                                                {"sizeOfDataToDelete", std::to_string(result.bytes)}})
                             .status());
  for (const std::string& file : result.files) SLUICE_RETURN_IF_ERROR(fs->Delete(file));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> end, Transaction::Start(fs, table_path));
  SLUICE_RETURN_IF_ERROR(end->Commit(kOperationVacuumEnd, StringMap{{"status", "COMPLETED"}},
                                     StringMap{{"numDeletedFiles", std::to_string(result.files.size())}})
                             .status());
  return result;
}

Result<RestoreResult> Restore(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                              const RestoreTarget& target) {
  if (target.version.has_value() == target.timestamp.has_value()) {
    return Status::Error(errors::kInvalidArgument, "RESTORE takes either a version or a timestamp");
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Start(fs, table_path));
  const SnapshotPtr latest = txn->read_snapshot();
  if (latest == nullptr) return TableNotFound(table_path);
  int64_t version = 0;
  if (target.version) {
    version = *target.version;
  } else {
    SLUICE_ASSIGN_OR_RETURN(version, VersionAt(*fs, table_path, *target.timestamp));
  }
  if (version < 0 || version > latest->version()) {
    return Status::Error(errors::kDeltaCannotRestoreTableVersion,
                         fmt::format("cannot restore '{}' to version {}: its versions are 0 to {}", table_path,
                                     version, latest->version()));
  }
  SnapshotOptions options;
  options.version = version;
  Result<SnapshotPtr> loaded = Snapshot::Load(fs, table_path, options);
  if (!loaded.ok()) {
    return Status::Error(errors::kDeltaCannotRestoreTableVersion,
                         fmt::format("cannot restore '{}' to version {}: {}", table_path, version,
                                     loaded.status().ToString()));
  }
  const SnapshotPtr old = *loaded;
  // A file is the same in both versions when its path and its deletion vector are.
  auto identity = [](const AddFile& file) {
    return file.path + "\n" + (file.deletion_vector ? file.deletion_vector->UniqueId() : "");
  };
  std::set<std::string> in_latest, in_old;
  for (const AddFile& file : latest->files()) in_latest.insert(identity(file));
  for (const AddFile& file : old->files()) in_old.insert(identity(file));

  RestoreResult result;
  result.restored_version = version;
  const int64_t now = NowMs();
  for (const AddFile& file : old->files()) {
    result.table_size_after_restore += file.size;
    ++result.num_files_after_restore;
    if (in_latest.count(identity(file)) > 0) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string path, DataFilePath(table_path, file.path));
    SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(path));
    if (!exists) {
      return Status::Error(errors::kDeltaCannotRestoreTableVersion,
                           fmt::format("cannot restore '{}' to version {}: its data file '{}' is gone (vacuumed?)",
                                       table_path, version, file.path));
    }
    AddFile add = file;
    add.data_change = true;
    add.modification_time = now;
    txn->Add(std::move(add));
    ++result.num_files_restored;
  }
  int64_t removed_bytes = 0, restored_bytes = 0;
  for (const AddFile& file : latest->files()) {
    if (in_old.count(identity(file)) > 0) continue;
    txn->Remove(RemovalOf(file, now));
    removed_bytes += file.size;
    ++result.num_files_removed;
  }
  for (const AddFile& file : old->files()) {
    if (in_latest.count(identity(file)) == 0) restored_bytes += file.size;
  }
  if (!(old->metadata() == latest->metadata())) {
    Metadata metadata = old->metadata();
    SLUICE_RETURN_IF_ERROR(txn->SetMetadata(std::move(metadata)).status());
  }
  txn->ReadWholeTable();
  // As Spark records it: the target as given.
  StringMap parameters = target.version ? StringMap{{"version", std::to_string(version)}}
                                        : StringMap{{"timestamp", *target.timestamp}};
  StringMap metrics = {{"tableSizeAfterRestore", std::to_string(result.table_size_after_restore)},
                       {"numOfFilesAfterRestore", std::to_string(result.num_files_after_restore)},
                       {"numRemovedFiles", std::to_string(result.num_files_removed)},
                       {"numRestoredFiles", std::to_string(result.num_files_restored)},
                       {"removedFilesSize", std::to_string(removed_bytes)},
                       {"restoredFilesSize", std::to_string(restored_bytes)}};
  SLUICE_ASSIGN_OR_RETURN(result.version, txn->Commit(kOperationRestore, std::move(parameters), std::move(metrics)));
  return result;
}

}  // namespace sluice::delta
