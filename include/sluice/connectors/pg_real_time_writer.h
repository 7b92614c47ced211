// PgRealTimeWriter: the `postgresql` sink under the `real_time` trigger. Rows handed over in
// pieces are buffered per writer task and flushed, one database transaction each, when a task
// holds `batch_size` rows, when its oldest buffered row has waited `batch_interval` or its last
// flush is `batch_interval` ago (so at most about one flush per interval besides full batches,
// and a row that comes when the task has been idle that long is written at once), or when the
// epoch ends.
//
// Back-pressure: each task buffers at most `batch_size` rows besides the chunk it is writing; Add()
// blocks while the buffer of a task it feeds is full, so the source stops reading until the
// database catches up, and memory stays bounded (2 x batch_size rows plus one incoming piece per
// task) whatever the input rate.
//
// Exactly-once bookkeeping: each chunk of task t claims (`<query_id>/rt<t>`, epoch, n) in the
// progress table in its own transaction, n being the number of the task's rows of the epoch
// written through the end of that chunk. A task's chunks commit in order, so the largest claimed
// n is exactly how many of the epoch's rows the task has in the table. The rows of each Add() (one
// read of the source) are put in their canonical order (PgUpsertWriter::CanonicalOrder) before
// they are shared out to tasks, and an epoch delivered again after a crash comes in the same reads
// (engine::Sink::AddRealTimeRows), so each task receives the same rows in the same order as the
// first time; it reads the claimed number before its first write of the epoch and skips as many
// of the epoch's first rows. Exact, for keyed and key-less tables, as long as tasks_per_connection
// is unchanged.
//
// Thread safety: Add() and EndEpoch() are called from one thread (the query's); each task has its
// own flush thread and owns its PgUpsertWriter.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/connectors/pg_upsert_writer.h"

namespace sluice::connectors {

struct PgRealTimeWriterOptions {
  std::string query_id;
  int64_t batch_size = 1000;
  std::chrono::microseconds batch_interval{100'000};
};

// The progress-table query id of real-time task `task` of query `query_id`.
std::string RealTimeProgressId(const std::string& query_id, size_t task);

class PgRealTimeWriter {
 public:
  // Takes the writers (one per task; rows go to tasks by a hash of the upsert key) and starts one
  // flush thread per task.
  PgRealTimeWriter(std::vector<std::unique_ptr<PgUpsertWriter>> writers, PgRealTimeWriterOptions options);
  // Stops the flush threads; rows still buffered are dropped (their epoch never ended, so the
  // engine delivers them again after a restart).
  ~PgRealTimeWriter();
  PgRealTimeWriter(const PgRealTimeWriter&) = delete;
  PgRealTimeWriter& operator=(const PgRealTimeWriter&) = delete;

  // Buffers `rows`, the rows of one read of the source, for epoch `epoch_id`; blocks while a task's
  // buffer is full. Returns the error of a failed flush (after its retries), after which the writer is
  // unusable.
  Status Add(int64_t epoch_id, const RecordBatch& rows);
  // Flushes every buffered row of `epoch_id` and waits until it is committed.
  Status EndEpoch(int64_t epoch_id);

  // Transactions committed so far (chunks skipped on a replay not counted).
  int64_t flushes() const;

 private:
  struct Task;
  void FlushLoop(Task* task);
  // Writes the rows of `segments`, rows [first, first + n) of the task's share of `epoch`, minus
  // those already committed. False when all of them were.
  Result<bool> WriteChunk(Task* task, int64_t epoch, int64_t first, const std::vector<BatchPtr>& segments);

  PgRealTimeWriterOptions options_;
  std::vector<std::unique_ptr<Task>> tasks_;
  // Rows of epoch `epoch_` handed to tasks so far (key-less rows go to tasks round-robin by it).
  int64_t epoch_ = -1;
  int64_t epoch_rows_ = 0;
};

}  // namespace sluice::connectors
