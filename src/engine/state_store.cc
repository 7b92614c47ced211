#include "sluice/engine/state_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"
#include "sluice/parquet/reader.h"
#include "sluice/parquet/writer.h"
#include "engine/state_files.h"

namespace sluice::engine {
namespace {

constexpr std::string_view kDeltaSuffix = ".delta.parquet";
constexpr std::string_view kSnapshotSuffix = ".snapshot.parquet";

// Writes `rows` of `schema` as the Parquet file `path`, published whole.
Status WriteStateFile(FileSystem& file_system, const std::string& path, const TypePtr& schema,
                      const RecordBatch& rows) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, file_system.OpenForWrite(path));
  parquet::WriterOptions options;
  options.compression = parquet::CompressionCodec::kZstd;
  options.zstd_level = 1;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetWriter> writer,
                          parquet::ParquetWriter::Open(std::move(file), schema, options));
  SLUICE_RETURN_IF_ERROR(writer->Write(rows));
  return writer->Close().status();
}

struct VersionFiles {
  bool delta = false;
  bool snapshot = false;
};

// The versions present in `directory`, by kind; other files are ignored. `rocksdb_files` tells
// whether the folder holds the rocksdb state store's versions.
Result<std::map<int64_t, VersionFiles>> ListVersions(FileSystem& file_system, const std::string& directory,
                                                     bool* rocksdb_files = nullptr) {
  std::map<int64_t, VersionFiles> versions;
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, StateFileNames(file_system, directory));
  for (const std::string& name : names) {
    if (rocksdb_files != nullptr && name.ends_with(".rocksdb")) *rocksdb_files = true;
    if (std::optional<int64_t> version = StateVersionOf(name, kSnapshotSuffix)) versions[*version].snapshot = true;
    if (std::optional<int64_t> version = StateVersionOf(name, kDeltaSuffix)) versions[*version].delta = true;
  }
  return versions;
}

}  // namespace

StateStore::StateStore(std::shared_ptr<FileSystem> file_system, std::string directory, TypePtr schema)
    : file_system_(std::move(file_system)), directory_(std::move(directory)), schema_(std::move(schema)) {}

std::string StateStore::PathOf(int64_t version, bool snapshot) const {
  return fmt::format("{}/{}{}", directory_, version, snapshot ? kSnapshotSuffix : kDeltaSuffix);
}

StateStore::~StateStore() { AwaitSnapshot(); }

void StateStore::AwaitSnapshot() {
  if (!pending_snapshot_.valid()) return;
  Status written = pending_snapshot_.get();
  if (!written.ok()) {
    LogWarn("a state snapshot in {} was not written ({}); its version loads from the deltas", directory_,
            written.ToString());
  }
}

Result<BatchPtr> StateStore::ReadFile(const std::string& path) const {
  auto fail = [&](const Status& why) {
    return Status::Error(errors::kCannotLoadStateStore, fmt::format("state file {}: {}", path, why.message()));
  };
  Result<std::unique_ptr<parquet::ParquetReader>> reader = parquet::ParquetReader::Open(*file_system_, path);
  if (!reader.ok()) return fail(reader.status());
  if (!(*reader)->schema()->Equals(*schema_)) {
    return fail(Status::Error(errors::kInvalidSchema,
                              fmt::format("holds {}, but this query's state is {}", (*reader)->schema()->ToString(),
                                          schema_->ToString())));
  }
  Result<BatchPtr> rows = (*reader)->ReadAll();
  if (!rows.ok()) return fail(rows.status());
  return rows;
}

Result<std::vector<BatchPtr>> StateStore::Load(int64_t version) const {
  std::vector<BatchPtr> parts;
  if (version < 0) return parts;
  bool rocksdb_files = false;
  SLUICE_ASSIGN_OR_RETURN(auto versions, ListVersions(*file_system_, directory_, &rocksdb_files));
  if (rocksdb_files && !versions.contains(version)) {
    return Status::Error(errors::kCannotLoadStateStore,
                         fmt::format("{} holds the state of the rocksdb state store; run the query with it, or start "
                                     "it from a new checkpoint to keep its state in memory",
                                     directory_));
  }
  int64_t start = 0;
  bool from_snapshot = false;
  for (auto it = versions.upper_bound(version); it != versions.begin();) {
    --it;
    if (it->second.snapshot) {
      start = it->first;
      from_snapshot = true;
      break;
    }
  }
  if (from_snapshot) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr snapshot, ReadFile(PathOf(start, true)));
    parts.push_back(std::move(snapshot));
    ++start;
  }
  for (int64_t v = start; v <= version; ++v) {
    auto it = versions.find(v);
    if (it == versions.end() || !it->second.delta) {
      return Status::Error(errors::kCannotLoadStateStore,
                           fmt::format("state version {} needs {}, which is missing", version, PathOf(v, false)));
    }
    SLUICE_ASSIGN_OR_RETURN(BatchPtr delta, ReadFile(PathOf(v, false)));
    parts.push_back(std::move(delta));
  }
  return parts;
}

Status StateStore::Write(int64_t version, const RecordBatch& changed, const std::function<Result<BatchPtr>()>& all) {
  AwaitSnapshot();
  SLUICE_RETURN_IF_ERROR(file_system_->CreateDirectories(directory_));
  SLUICE_RETURN_IF_ERROR(WriteStateFile(*file_system_, PathOf(version, false), schema_, changed));
  if (version > 0 && version % kSnapshotInterval == 0) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr whole, all());
    pending_snapshot_ = std::async(std::launch::async, [file_system = file_system_, path = PathOf(version, true),
                                                        schema = schema_, whole = std::move(whole)] {
      return WriteStateFile(*file_system, path, schema, *whole);
    });
  }
  return Purge(version);
}

Status StateStore::Purge(int64_t version) {
  // Every version from `oldest` on stays loadable: keep the newest snapshot at or below it and
  // everything after.
  const int64_t oldest = version - kVersionsToKeep + 1;
  if (oldest <= 0) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(auto versions, ListVersions(*file_system_, directory_));
  int64_t keep_from = -1;
  for (const auto& [v, files] : versions) {
    if (v <= oldest && files.snapshot) keep_from = v;
  }
  for (const auto& [v, files] : versions) {
    if (v >= keep_from) break;
    if (files.delta) SLUICE_RETURN_IF_ERROR(file_system_->Delete(PathOf(v, false)));
    if (files.snapshot) SLUICE_RETURN_IF_ERROR(file_system_->Delete(PathOf(v, true)));
  }
  return Status::OK();
}

}  // namespace sluice::engine
