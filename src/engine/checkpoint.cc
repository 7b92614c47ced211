// The checkpoint directory: metadata, the offset and commit logs, and the lock.
#include "sluice/engine/checkpoint.h"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <random>

#include "sluice/core/json_text.h"
#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

constexpr std::string_view kVersionLine = "v1";

Status Corrupt(std::string_view what, std::string detail) {
  return Status::Error(errors::kCheckpointCorrupt,
                       std::string(what) + ": " + detail +
                           "; the checkpoint was not written by this version of sluice or was edited "
                           "by hand (restore it, or start the query with a new checkpoint location)");
}

// Splits off the first line of `text` (without its '\n').
std::string_view NextLine(std::string_view* text) {
  size_t end = text->find('\n');
  std::string_view line = text->substr(0, end);
  text->remove_prefix(end == std::string_view::npos ? text->size() : end + 1);
  return line;
}

std::optional<int64_t> ParseBatchId(std::string_view name) {
  if (name.empty() || name.size() > 18) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (ec != std::errc() || end != name.data() + name.size() || value < 0) return std::nullopt;
  return value;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Result<std::string> ReadQueryId(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view id;
  if (parser.parse(simdjson::padded_string(text)).get(doc) != simdjson::SUCCESS ||
      doc["id"].get(id) != simdjson::SUCCESS || id.empty()) {
    return Corrupt("metadata", "expected a JSON object with a string field \"id\"");
  }
  return std::string(id);
}

}  // namespace

std::string NewUuid() {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  uint64_t high = generator(), low = generator();
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;    // variant 1
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>((high >> 16) & 0xffff), static_cast<unsigned>(high & 0xffff),
                static_cast<unsigned>(low >> 48), static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

std::string SerializeOffsetLogEntry(const OffsetLogEntry& entry) {
  std::string text(kVersionLine);
  text += "\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":" + std::to_string(entry.batch_timestamp_ms) +
          ",\"conf\":{}}";
  for (const std::string& offset : entry.source_offsets) {
    text += '\n';
    text += offset;
  }
  return text;
}

Result<OffsetLogEntry> ParseOffsetLogEntry(std::string_view text) {
  std::string_view rest = text;
  if (NextLine(&rest) != kVersionLine) return Corrupt("offset log entry", "the first line is not \"v1\"");
  std::string_view metadata_line = NextLine(&rest);
  OffsetLogEntry entry;
  simdjson::dom::parser parser;
  simdjson::dom::element metadata;
  if (parser.parse(simdjson::padded_string(metadata_line)).get(metadata) != simdjson::SUCCESS ||
      metadata["batchTimestampMs"].get(entry.batch_timestamp_ms) != simdjson::SUCCESS) {
    return Corrupt("offset log entry", "the second line is not a JSON object with \"batchTimestampMs\"");
  }
  while (!rest.empty()) {
    std::string_view line = NextLine(&rest);
    if (!IsSingleLineJson(line)) {
      return Corrupt("offset log entry", "source offset " + std::to_string(entry.source_offsets.size()) +
                                             " is not a JSON document");
    }
    entry.source_offsets.emplace_back(line);
  }
  if (entry.source_offsets.empty()) return Corrupt("offset log entry", "no source offset");
  return entry;
}

std::string SerializeCommitLogEntry() { return std::string(kVersionLine) + "\n{\"nextBatchWatermarkMs\":0}"; }

Status ParseCommitLogEntry(std::string_view text) {
  std::string_view rest = text;
  if (NextLine(&rest) != kVersionLine) return Corrupt("commit log entry", "the first line is not \"v1\"");
  if (!IsSingleLineJson(NextLine(&rest))) return Corrupt("commit log entry", "the second line is not JSON");
  return Status::OK();
}

Status CheckIsCheckpoint(FileSystem& file_system, const std::string& root) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, file_system.Exists(root));
  if (!exists) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> entries, file_system.List(root));
  if (entries.empty()) return Status::OK();
  Result<std::string> metadata = file_system.ReadFile(root + "/metadata");
  if (metadata.ok() && ReadQueryId(*metadata).ok()) return Status::OK();
  return Status::Error(errors::kCheckpointCorrupt,
                       root + " is not a sluice checkpoint (it holds files but no metadata with a query id); "
                              "it is left as it is");
}

Result<std::optional<std::string>> CheckpointQueryId(FileSystem& file_system, const std::string& root) {
  Result<std::string> metadata = file_system.ReadFile(root + "/metadata");
  if (!metadata.ok()) {
    if (metadata.status().error_class() == errors::kFileNotFound) return std::optional<std::string>();
    return metadata.status();
  }
  SLUICE_ASSIGN_OR_RETURN(std::string id, ReadQueryId(*metadata));
  return std::optional<std::string>(std::move(id));
}

Result<std::unique_ptr<Checkpoint>> Checkpoint::Open(std::shared_ptr<FileSystem> file_system, std::string root,
                                                     const std::string& new_query_id) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  SLUICE_RETURN_IF_ERROR(file_system->CreateDirectories(root));

  // The lock, held for the life of the Checkpoint: on the local disk the kernel drops it when the
  // process dies, so a kill -9 never leaves a stale lock behind; on an object store it is a lease
  // that expires.
  Result<std::unique_ptr<FileLock>> lock = file_system->Lock(root + "/lock");
  if (!lock.ok() && lock.status().error_class() == errors::kStorageLeaseHeld) {
    return Status::Error(errors::kConcurrentQuery,
                         "another query is running on the checkpoint " + root + " (" +
                             std::string(lock.status().message()) +
                             "); stop it first, or give this query its own checkpoint location");
  }
  if (!lock.ok()) return lock.status();
  std::unique_ptr<Checkpoint> checkpoint(new Checkpoint(std::move(file_system), root, std::move(lock).value()));

  std::string metadata_path = root + "/metadata";
  Result<std::string> metadata = checkpoint->file_system_->ReadFile(metadata_path);
  if (!metadata.ok() && metadata.status().error_class() != errors::kFileNotFound) return metadata.status();
  if (!metadata.ok()) {
    // A new checkpoint starts in a folder that holds nothing but its lock. Anything else there
    // is another program's data, or a checkpoint that lost its metadata: never run on it (a
    // query would take it for a fresh start and write every row again).
    SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> entries, checkpoint->file_system_->List(root));
    for (const FileInfo& entry : entries) {
      if (BaseName(entry.path) != "lock") {
        return Status::Error(errors::kCheckpointCorrupt,
                             "the checkpoint location " + root + " holds '" + BaseName(entry.path) +
                                 "' but no metadata: it is not a sluice checkpoint, or one whose metadata was "
                                 "lost; give the query an empty or new checkpoint location");
      }
    }
    std::string text = "{\"id\":" + JsonString(new_query_id.empty() ? NewUuid() : new_query_id) + "}";
    Status written = checkpoint->file_system_->PutIfAbsent(metadata_path, text);
    if (!written.ok() && written.error_class() != errors::kFileAlreadyExists) return written;
    metadata = checkpoint->file_system_->ReadFile(metadata_path);
    if (!metadata.ok()) return metadata.status();
  }
  SLUICE_ASSIGN_OR_RETURN(checkpoint->query_id_, ReadQueryId(*metadata));
  return checkpoint;
}

Checkpoint::Checkpoint(std::shared_ptr<FileSystem> file_system, std::string root, std::unique_ptr<FileLock> lock)
    : file_system_(std::move(file_system)), root_(std::move(root)), lock_(std::move(lock)) {}

Checkpoint::~Checkpoint() = default;

std::string Checkpoint::SourceStateDirectory(int index) const {
  return root_ + "/sources/" + std::to_string(index);
}

Result<std::optional<int64_t>> Checkpoint::LatestBatch(const std::string& directory) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, file_system_->List(directory));
  std::optional<int64_t> latest;
  for (const FileInfo& file : files) {
    // Temporary files of an interrupted write and anything else that is not a batch id are not
    // entries.
    std::optional<int64_t> id = ParseBatchId(BaseName(file.path));
    if (id && !file.is_directory && (!latest || *id > *latest)) latest = id;
  }
  return latest;
}

Result<std::optional<int64_t>> Checkpoint::LatestOffsetBatch() const { return LatestBatch(root_ + "/offsets"); }
Result<std::optional<int64_t>> Checkpoint::LatestCommitBatch() const { return LatestBatch(root_ + "/commits"); }

Result<OffsetLogEntry> Checkpoint::ReadOffsets(int64_t batch_id) const {
  SLUICE_ASSIGN_OR_RETURN(std::string text, file_system_->ReadFile(root_ + "/offsets/" + std::to_string(batch_id)));
  Result<OffsetLogEntry> entry = ParseOffsetLogEntry(text);
  if (!entry.ok()) return entry.status().WithContext("offsets/" + std::to_string(batch_id));
  return entry;
}

static Status PutLogEntry(FileSystem* file_system, const FileLock& lock, const std::string& path,
                          std::string_view text, std::string_view log, int64_t batch_id) {
  Status held = lock.Check();
  if (!held.ok()) return Status::Error(errors::kConcurrentQuery, std::string(held.message()));
  Status status = file_system->PutIfAbsent(path, text);
  if (status.error_class() == errors::kFileAlreadyExists) {
    return Status::Error(errors::kConcurrentQuery,
                         std::string(log) + "/" + std::to_string(batch_id) +
                             " was written by another query while this one ran; only one query may "
                             "run on a checkpoint at a time");
  }
  return status;
}

Status Checkpoint::WriteOffsets(int64_t batch_id, const OffsetLogEntry& entry) {
  return PutLogEntry(file_system_.get(), *lock_, root_ + "/offsets/" + std::to_string(batch_id),
                     SerializeOffsetLogEntry(entry), "offsets", batch_id);
}

Status Checkpoint::WriteCommit(int64_t batch_id) {
  SLUICE_RETURN_IF_ERROR(PutLogEntry(file_system_.get(), *lock_, root_ + "/commits/" + std::to_string(batch_id),
                                     SerializeCommitLogEntry(), "commits", batch_id));
  SLUICE_RETURN_IF_ERROR(file_system_->DeleteRecursively(EpochReadsPath(batch_id)));
  return Purge(batch_id);
}

std::string Checkpoint::EpochReadsPath(int64_t epoch_id) const { return root_ + "/reads/" + std::to_string(epoch_id); }

Status Checkpoint::LogEpochRead(int64_t epoch_id, int64_t read, const std::string& end) {
  return PutLogEntry(file_system_.get(), *lock_, EpochReadsPath(epoch_id) + "/" + std::to_string(read), end,
                     "reads/" + std::to_string(epoch_id), read);
}

Result<std::optional<std::vector<std::string>>> Checkpoint::ReadEpochReads(int64_t epoch_id) const {
  const std::string directory = EpochReadsPath(epoch_id);
  SLUICE_ASSIGN_OR_RETURN(bool exists, file_system_->Exists(directory));
  if (!exists) return std::optional<std::vector<std::string>>();
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, file_system_->List(directory));
  std::vector<int64_t> reads;
  for (const FileInfo& file : files) {
    // Temporary files of an interrupted write are not reads.
    std::optional<int64_t> read = ParseBatchId(BaseName(file.path));
    if (read && !file.is_directory) reads.push_back(*read);
  }
  std::sort(reads.begin(), reads.end());
  std::vector<std::string> ends;
  for (size_t k = 0; k < reads.size(); ++k) {
    const std::string name = "reads/" + std::to_string(epoch_id) + "/" + std::to_string(k);
    if (reads[k] != static_cast<int64_t>(k)) {
      return Status::Error(errors::kCheckpointCorrupt, name + " is missing while later reads of the epoch are logged");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string end, file_system_->ReadFile(directory + "/" + std::to_string(k)));
    if (!IsSingleLineJson(end)) {
      return Status::Error(errors::kCheckpointCorrupt, name + " does not hold one line of JSON");
    }
    ends.push_back(std::move(end));
  }
  if (ends.empty()) return std::optional<std::vector<std::string>>();
  return std::optional<std::vector<std::string>>(std::move(ends));
}

Status Checkpoint::Purge(int64_t latest_batch) {
  int64_t keep_from = latest_batch - kEntriesToKeep + 1;
  if (keep_from <= 0 || keep_from <= purged_below_) return Status::OK();
  for (const char* log : {"/offsets", "/commits"}) {
    std::string directory = root_ + log;
    if (purged_below_ < 0) {
      // First purge of this run: entries of earlier runs may lie anywhere below.
      SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, file_system_->List(directory));
      for (const FileInfo& file : files) {
        std::optional<int64_t> id = ParseBatchId(BaseName(file.path));
        if (id && *id < keep_from) SLUICE_RETURN_IF_ERROR(file_system_->Delete(file.path));
      }
    } else {
      for (int64_t id = purged_below_; id < keep_from; ++id) {
        SLUICE_RETURN_IF_ERROR(file_system_->Delete(directory + "/" + std::to_string(id)));
      }
    }
  }
  purged_below_ = keep_from;
  return Status::OK();
}

}  // namespace sluice::engine
