// The memory sink: keeps every batch it receives in a MemoryTable, for tests and demos.
//
// Batches are kept by reference to their (immutable) columns, without copying data; each batch
// adds to the table (modes `append` and `update`). Idempotent per batch id: a batch id at or below the last one received is ignored. Supports the
// real_time trigger (rows are visible as soon as they are delivered).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/engine/sink.h"

namespace sluice::engine {

// The rows a memory sink wrote. Thread-safe: a test may read while the query writes.
class MemoryTable {
 public:
  // The process-wide table of this name (the `memory` format's `queryName` option), created on
  // first use.
  static std::shared_ptr<MemoryTable> Named(const std::string& name);

  std::vector<BatchPtr> batches() const;
  // The batch id each batch in batches() came with.
  std::vector<int64_t> batch_ids() const;
  int64_t num_rows() const;
  // The highest batch id received, or -1.
  int64_t last_batch_id() const;

  void Append(int64_t batch_id, BatchPtr batch);

 private:
  mutable std::mutex mutex_;
  std::vector<BatchPtr> batches_;
  std::vector<int64_t> batch_ids_;
  int64_t last_batch_id_ = -1;
};

class MemorySink final : public Sink {
 public:
  explicit MemorySink(std::shared_ptr<MemoryTable> table) : table_(std::move(table)) {}

  std::string description() const override { return "MemorySink"; }
  std::vector<OutputMode> supported_output_modes() const override {
    return {OutputMode::kAppend, OutputMode::kUpdate};
  }
  Status Open(const SinkContext&) override { return Status::OK(); }
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override;
  bool supports_real_time() const override { return true; }
  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override;
  Status EndEpoch(int64_t) override { return Status::OK(); }

 private:
  std::shared_ptr<MemoryTable> table_;
};

}  // namespace sluice::engine
