// Checkpoint: the directory that makes a streaming query restartable exactly once.
//
//   <root>/metadata       {"id":"<query id>"}: written once, read on every restart
//   <root>/offsets/<N>    the planned range of batch N, written BEFORE the batch runs
//   <root>/commits/<N>    written AFTER the sink made batch N durable
//   <root>/reads/<N>/<k>  the end offset of read k of real_time epoch N, written BEFORE its rows
//                         reach the sink; reads/N goes with commits/N
//   <root>/sources/<i>/   private state of source i
//   <root>/lock           held (flock) while a query runs on this checkpoint
//
// Log files follow Spark's format: a version line, then JSON lines.
//   offsets/N:  v1
//               {"batchWatermarkMs":0,"batchTimestampMs":1767225600000,"conf":{}}
//               <the end offset of source 0, as the source serialized it>
//   commits/N:  v1
//               {"nextBatchWatermarkMs":0}
// Batch N reads from the end offset in offsets/N-1 (or the source's initial offset for the first
// batch) to the end offset in offsets/N. Log files are created with put-if-absent: a file, once
// visible, is complete and never changes; a second writer of the same N loses with
// CONCURRENT_QUERY. The lock file makes a second query on the same checkpoint fail at Open().
//
// Recovery: an offsets/N without commits/N is a batch that may have partly reached the sink; the
// query re-runs it with the same id and range (the sink is idempotent per batch id). A reads/N
// without commits/N is a real_time epoch that may have partly reached the sink: the query reads
// the same ranges again, in the same reads, so a sink that writes the rows of an epoch as they
// come can tell by counting which of them it already holds. reads/N/k holds one line: the end
// offset of the epoch's read k (0, 1, ...); one small file per read keeps each read's logging
// cost independent of how many reads the epoch has had.
//
// A Checkpoint is used by one query thread; it is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"

namespace sluice::engine {

struct OffsetLogEntry {
  int64_t batch_timestamp_ms = 0;
  // One end offset per source (compact single-line JSON).
  std::vector<std::string> source_offsets;

  bool operator==(const OffsetLogEntry&) const = default;
};

// Text of the log files (exposed for tests and tools).
std::string SerializeOffsetLogEntry(const OffsetLogEntry& entry);
// CHECKPOINT_CORRUPT naming the problem when the text is not a v1 offset log entry.
Result<OffsetLogEntry> ParseOffsetLogEntry(std::string_view text);
std::string SerializeCommitLogEntry();
Status ParseCommitLogEntry(std::string_view text);

// OK when `root` may be deleted as a checkpoint: it does not exist, is empty, or holds a
// `metadata` file with a query id. CHECKPOINT_CORRUPT otherwise (a folder of other files is
// never taken for a checkpoint, so a mistyped location is not wiped).
Status CheckIsCheckpoint(FileSystem& file_system, const std::string& root);

// The query id in `root`'s metadata, nullopt when there is no metadata file (a new checkpoint);
// CHECKPOINT_CORRUPT when the file holds no query id.
Result<std::optional<std::string>> CheckpointQueryId(FileSystem& file_system, const std::string& root);

class Checkpoint {
 public:
  // Entries kept in each log; older ones are deleted as new batches commit (Spark's default).
  static constexpr int64_t kEntriesToKeep = 100;

  // Opens the checkpoint at `root`, creating it when absent (with `new_query_id`, or a new random
  // query id when that is empty), and takes its lock. CONCURRENT_QUERY when another query holds the lock; CHECKPOINT_CORRUPT when
  // the metadata cannot be read; IO_ERROR from the file system. The lock is released when the
  // Checkpoint is destroyed (or the process dies).
  static Result<std::unique_ptr<Checkpoint>> Open(std::shared_ptr<FileSystem> file_system, std::string root,
                                                  const std::string& new_query_id = "");
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  const std::string& root() const { return root_; }
  const std::string& query_id() const { return query_id_; }
  FileSystem* file_system() const { return file_system_.get(); }
  // `<root>/sources/<index>`.
  std::string SourceStateDirectory(int index) const;

  // The highest batch id in each log, or nullopt when the log is empty.
  Result<std::optional<int64_t>> LatestOffsetBatch() const;
  Result<std::optional<int64_t>> LatestCommitBatch() const;

  // FILE_NOT_FOUND when absent; CHECKPOINT_CORRUPT when unreadable.
  Result<OffsetLogEntry> ReadOffsets(int64_t batch_id) const;
  // Put-if-absent; CONCURRENT_QUERY when offsets/N already exists.
  Status WriteOffsets(int64_t batch_id, const OffsetLogEntry& entry);
  // Put-if-absent; CONCURRENT_QUERY when commits/N already exists. Then deletes reads/N and the
  // entries of both logs older than the last kEntriesToKeep.
  Status WriteCommit(int64_t batch_id);

  // Logs `end`, the end offset of read `read` (0, 1, ...) of real_time epoch N, durably
  // (put-if-absent: CONCURRENT_QUERY when that read is logged already).
  Status LogEpochRead(int64_t epoch_id, int64_t read, const std::string& end);
  // The end offsets logged for epoch N, in read order; nullopt when none is; CHECKPOINT_CORRUPT
  // when the reads logged are not 0 to k without a gap.
  Result<std::optional<std::vector<std::string>>> ReadEpochReads(int64_t epoch_id) const;

 private:
  Checkpoint(std::shared_ptr<FileSystem> file_system, std::string root, std::unique_ptr<FileLock> lock);
  Result<std::optional<int64_t>> LatestBatch(const std::string& directory) const;
  Status Purge(int64_t latest_batch);
  std::string EpochReadsPath(int64_t epoch_id) const;

  std::shared_ptr<FileSystem> file_system_;
  std::string root_;
  std::unique_ptr<FileLock> lock_;
  std::string query_id_;
  // Log entries below this id are known to be deleted already.
  int64_t purged_below_ = -1;
};

// A random (version 4) UUID, "8-4-4-4-12" lower-case hex. Query and run ids.
std::string NewUuid();

}  // namespace sluice::engine
