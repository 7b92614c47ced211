// Sink: where a streaming query writes. A sink is idempotent per batch id: batch N written again
// after a crash (with the same rows, since the offset log fixed the batch's range) leaves the
// destination as if it had been written once. That, with replayable sources, is exactly once.
//
// Lifecycle: the engine calls Open() once before any batch, then per batch BeginBatch(), the
// writer's Add() for each piece and its Commit(); a sink need not be thread-safe. Commit returns
// only when the batch is durable: the engine writes `commits/N` right after. An error stops the
// query with that error (a sink that can retry transient failures does so inside the writer).
// There is one way to write a batch: AddBatch() and AddBatchPieces() below are helpers over it, and
// WholeBatchWriter serves sinks that need a batch's rows all at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
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
// makes the whole batch durable at once.
// Destroying the writer without a successful Commit() leaves the destination as if the batch had
// never started (a Delta table may keep unreferenced data files; no reader sees them). The calls
// never overlap, but may come from a thread other than the query's; while a batch writer is
// open the engine calls nothing else on its sink.
class BatchWriter {
 public:
  virtual ~BatchWriter() = default;
  // Pieces all have the schema given to BeginBatch.
  virtual Status Add(BatchPtr piece) = 0;
  // After every piece; after an error the writer is spent.
  virtual Status Commit() = 0;
};

// A writer for sinks that write a batch whole: it keeps the pieces and hands them, at Commit, to
// `write` (at least one piece: an empty batch of the schema when none came).
class WholeBatchWriter final : public BatchWriter {
 public:
  using Write = std::function<Status(const std::vector<BatchPtr>& pieces)>;
  WholeBatchWriter(TypePtr schema, Write write) : schema_(std::move(schema)), write_(std::move(write)) {}
  Status Add(BatchPtr piece) override;
  Status Commit() override;
  // `write` takes the pieces concatenated into one batch.
  static std::unique_ptr<BatchWriter> Concatenating(TypePtr schema, std::function<Status(const RecordBatch&)> write);

 private:
  TypePtr schema_;
  Write write_;
  std::vector<BatchPtr> pieces_;
};

// What a sink is told of the batch it is to write.
struct BatchInfo {
  int64_t batch_id = 0;
  TypePtr schema;  // of every piece
  // The source's offsets before and after the batch, as the offset log holds them (the source's
  // JSON; empty when the batch was not read by the engine). A sink may record them with the batch
  // instead of the batch id: the ingestion table keeps each Kafka partition's last offset.
  std::string start_offset = {};
  std::string end_offset = {};
};

class Sink {
 public:
  virtual ~Sink() = default;

  // A short text for progress reports ("MemorySink", "DeltaSink[/warehouse/t]").
  virtual std::string description() const = 0;
  virtual std::vector<OutputMode> supported_output_modes() const = 0;

  virtual Status Open(const SinkContext& context) = 0;
  // Starts batch `info.batch_id`, to be written as the source reads it (the engine overlaps the
  // source's reading with the writer's work). Its Commit writes the batch durably, or does nothing
  // when that batch is already durable here. Sinks that can write pieces as they come (Delta
  // tables) hold no piece after Add returns; the others collect them (WholeBatchWriter).
  virtual Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) = 0;

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

// Writes batch `batch_id` of `pieces` (at least one, all of one schema) through BeginBatch, Add and
// Commit: the whole of a batch that is at hand, as tools and tests write one.
Status AddBatchPieces(Sink& sink, int64_t batch_id, const std::vector<BatchPtr>& pieces);
Status AddBatch(Sink& sink, int64_t batch_id, const RecordBatch& batch);

}  // namespace sluice::engine
