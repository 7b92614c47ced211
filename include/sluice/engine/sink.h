// Sink: where a streaming query writes. A sink is idempotent per batch id: AddBatch(N, ...) called
// again after a crash (with the same rows, since the offset log fixed the batch's range) leaves the
// destination as if it had been called once. That, with replayable sources, is exactly once.
//
// Lifecycle: the engine calls Open() once before any batch, then AddBatch() per batch from the
// query's thread; a sink need not be thread-safe. AddBatch returns only when the batch is durable:
// the engine writes `commits/N` right after. An error stops the query with that error (a sink that
// can retry transient failures does so inside AddBatch).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::engine {

// Spark's output modes. `append`: each batch's new rows; `update`: rows that changed since the
// last batch; `complete`: the whole result after every batch.
enum class OutputMode { kAppend, kUpdate, kComplete };

std::string_view OutputModeName(OutputMode mode);  // "append", "update", "complete"
// Case-insensitive; INVALID_OPTIONS listing the accepted names otherwise.
Result<OutputMode> ParseOutputMode(std::string_view name);

// What a sink may use while it runs.
struct SinkContext {
  // The key of the sink's idempotence: stable across restarts of the same checkpoint (a Delta
  // sink writes txn{appId: query_id, version: batch id}).
  std::string query_id;
  OutputMode output_mode = OutputMode::kAppend;
  std::shared_ptr<FileSystem> file_system;
  // Set once the query is asked to stop; valid for the sink's life (the query owns both). A sink
  // that waits (to retry, for back-pressure) gives up its wait when it is set and fails the batch
  // with QUERY_STOPPED: the query then ends as stopped, and the batch runs again on restart.
  const std::atomic<bool>* stop_requested = nullptr;
  // The query's name (a pipeline's flow name), for what the sink reports.
  std::string query_name = {};
};

// One batch written piece by piece (Sink::BeginBatch): Add() each piece in order, then Commit()
// makes the whole batch durable at once, exactly as AddBatchPieces would with every piece.
// Destroying the writer without a successful Commit() leaves the destination as if the batch had
// never started (a Delta table may keep unreferenced data files; no reader sees them). The calls
// never overlap, but may come from a thread other than the query's; while a batch writer is
// open the engine calls nothing else on its sink.
class BatchWriter {
 public:
  virtual ~BatchWriter() = default;
  // Pieces all have the schema given to BeginBatch.
  virtual Status Add(BatchPtr piece) = 0;
  // After every piece. Errors as AddBatch; after an error the writer is spent.
  virtual Status Commit() = 0;
};

class Sink {
 public:
  virtual ~Sink() = default;

  // A short text for progress reports ("MemorySink", "DeltaSink[/warehouse/t]").
  virtual std::string description() const = 0;
  virtual std::vector<OutputMode> supported_output_modes() const = 0;

  virtual Status Open(const SinkContext& context) = 0;
  // Writes batch `batch_id` durably, or does nothing when that batch id is already durable here.
  // The batch is read-only and valid for the duration of the call only.
  virtual Status AddBatch(int64_t batch_id, const RecordBatch& batch) = 0;
  // AddBatch for a batch that comes in pieces, as sources read it (its rows are the pieces' rows
  // in order; at least one piece, all of one schema). The engine calls this one. By default the
  // pieces are concatenated for AddBatch; sinks that write pieces as they are (Delta tables,
  // PostgreSQL COPY) override it and spare a copy of the whole batch.
  virtual Status AddBatchPieces(int64_t batch_id, const std::vector<BatchPtr>& pieces);
  // Starts batch `batch_id`, whose pieces have `schema`, to be written as the source reads it
  // (the engine calls this one, and overlaps the source's reading with the writer's work). By
  // default the writer keeps the pieces and hands them to AddBatchPieces on Commit (an empty
  // batch of `schema` when there were none); sinks that can write pieces as they come (Delta
  // tables) override it, and then hold no piece after Add returns.
  virtual Result<std::unique_ptr<BatchWriter>> BeginBatch(int64_t batch_id, TypePtr schema);

  // The `real_time` trigger delivers rows as they arrive, in several calls per epoch, and ends
  // each epoch with EndEpoch(). Only sinks that return true here may run under that trigger.
  virtual bool supports_real_time() const { return false; }
  // The rows of one read of the source in epoch `epoch_id`; the sink may buffer them and flush by
  // its own size or interval. An epoch cut short by a crash is delivered again after the restart
  // in the same reads: the n-th call holds the same rows as the n-th call of the first delivery,
  // though possibly in another order (a read of several Kafka partitions interleaves them as they
  // arrive), and ends with EndEpoch().
  virtual Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows);
  // Makes every row of the epoch durable before the engine logs the epoch as committed.
  virtual Status EndEpoch(int64_t epoch_id);
};

}  // namespace sluice::engine
